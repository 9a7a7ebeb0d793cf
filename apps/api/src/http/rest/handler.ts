import { hash } from 'node:crypto';
import { type Authenticated, newMediaKey, type PagePosition, removeRecording } from '@convo/domain';
import {
  ApiError,
  answerJson,
  type Context,
  codeForTrpc,
  createContext,
  ERRORS,
  type ErrorCode,
  errorBody,
  noteHeaders,
  type Operation,
  RECORDING_FIELD,
  ReceivedRecording,
} from '@convo/router';
import { TRPCError } from '@trpc/server';
import type { Hono, Context as HonoContext } from 'hono';
import { type ApiEnv, json } from '../answers.ts';
import { type BodyLimits, mediaType } from '../body.ts';
import type { Services } from '../services.ts';
import { readSiteForm } from '../site-form.ts';
import { bodyInput, formInput, queryInput, typed } from './input.ts';
import { allowed, type Route, restRoutes, takesBody } from './routes.ts';

/*
 * REST v1: each operation's declared method and path, its input read from the query or the body
 * (JSON or form-encoded, within the limits), the call made by the operation's own steps
 * (`operation.call`: auth, rate limits, input and output schemas and errors are the procedure's), and
 * errors given our `{error, code}` body straight from the one table. trpc-to-openapi writes the
 * OpenAPI document from the same declarations (openapi.ts); it does not serve requests.
 */

export const REST_PREFIX = '/api/v1';

/** A multipart body's refusal (the site's form reader words it) as a row of the error table. */
const MULTIPART_REFUSALS: Partial<Record<number, ErrorCode>> = {
  408: 'request_timeout',
  413: 'body_too_large',
  503: 'unavailable',
};

const restError = (code: ErrorCode, detail = '', headers: Record<string, string> = {}) =>
  json(ERRORS[code].status, errorBody(code, detail), headers);

/**
 * GitHub-style paging links: next, prev and first, each only when that page exists. They are
 * absolute only on an origin the operator configured or trusts, never on the request's Host.
 */
function linkHeader(origin: string | null, url: URL, position: PagePosition): string | undefined {
  const to = (page: number, rel: string) => {
    const query = new URLSearchParams(url.search);
    query.set('page', String(page));
    return `<${origin ?? ''}${url.pathname}?${query}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (position.hasNext) links.push(to(position.page + 1, 'next'));
  if (position.hasPrevious) links.push(to(position.page - 1, 'prev'), to(1, 'first'));
  return links.length > 0 ? links.join(', ') : undefined;
}

/** A conditional answer may be kept by its client (not by shared caches) and must be revalidated. */
const REVALIDATE = { 'cache-control': 'private, no-cache', vary: 'Authorization' };

/**
 * The strong tag of a conditional answer: a digest of the account's change mark and of all else
 * the answer depends on (the account's address, the operation, its query), so any change to the
 * account's conversations or its host gives every answer a new tag, on every replica at once.
 */
function entityTag(route: Route, found: Authenticated, url: URL): string {
  const { account } = found;
  const of = [found.changeMark, account.id, account.host, account.key, route.operation.name, url.search];
  const digest = hash('sha256', of.join('\n'), 'base64url');
  return `"${digest.slice(0, 27)}"`;
}

/**
 * If-None-Match names this tag; weak tags compare by their value, as RFC 9110 says. `*` ("any
 * answer exists") is not taken: whether one exists is only known by running the read, and a full
 * answer is never wrong.
 */
function matchesTag(header: string | null, tag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === tag);
}

export interface RestOptions {
  body: BodyLimits;
  /** The origin absolute links are built on; null: links are relative (see app.ts). */
  origin(req: Request): string | null;
}

/**
 * REST v1 on the API's Hono app: each operation at its declared method and path (Hono's router;
 * `{id}` is `:id`), then the path's other methods answered 405 with Allow, and any other path
 * under the prefix 404. HEAD is GET without the body (Hono runs the GET route).
 */
export function mountRest(
  api: Hono<ApiEnv>,
  operations: readonly Operation[],
  services: Services,
  options: RestOptions,
) {
  /** The procedure's answer, or its error as a row of the table. */
  async function run(route: Route, context: Context, input: unknown, requestId: string) {
    try {
      return { ok: true as const, answer: await route.operation.call(context, input) };
    } catch (e) {
      if (e instanceof ApiError) return { ok: false as const, response: restError(e.appCode, e.message) };
      if (!(e instanceof TRPCError)) throw e;
      const code = codeForTrpc(e.code);
      if (code === 'internal') services.logger.error({ err: e.cause ?? e, requestId }, 'request failed');
      return { ok: false as const, response: restError(code) };
    }
  }

  const answer = (route: Route) => async (c: HonoContext<ApiEnv>) => {
    const req = c.req.raw;
    const url = c.get('url');
    const request = c.get('request');
    request.label = route.operation.label;
    const recording = new ReceivedRecording();
    const context = createContext(services, req, request, recording);
    // The token is looked up once (the context keeps it) and refused in one place, the procedure's
    // own middleware (authedProcedure); without one no body is read, and the call gets no input.
    const authenticated = await context.authenticate();
    // A conditional answer is judged by the account's change mark, read with the token: before the
    // data, so an answer's tag is never newer than its body. A match costs no quota (as on GitHub).
    const tag = authenticated && route.operation.conditional ? entityTag(route, authenticated, url) : null;
    if (tag && matchesTag(req.headers.get('if-none-match'), tag)) {
      return new Response(null, { status: 304, headers: { etag: tag, ...REVALIDATE } });
    }
    // An operation that takes a recording may be sent as multipart: its file is kept as it arrives.
    const read =
      authenticated && route.recording && mediaType(req) === 'multipart/form-data'
        ? await readSiteForm(req, options.body, {
            store: services.media.store,
            maxBytes: services.media.limits.maxBytes,
            newKey: () => newMediaKey(authenticated.account.id),
            field: RECORDING_FIELD,
          })
        : null;
    if (read && !read.ok) return restError(MULTIPART_REFUSALS[read.status] ?? 'malformed_body', read.message);
    if (read?.file) recording.hold(read.file);
    const fields = !authenticated
      ? {}
      : takesBody(route.method)
        ? {
            ...(route.operation.queryToo ? queryInput(url, route.kinds) : {}),
            ...(read ? formInput(read.fields, route.kinds) : await bodyInput(req, options.body, route.kinds)),
          }
        : queryInput(url, route.kinds);
    // The path's own parameters win over a body or query field of the same name.
    const input = Object.assign(
      fields,
      Object.fromEntries(
        Object.entries(c.req.param()).map(([key, value]) => [key, typed(value, route.kinds.get(key))]),
      ),
    );
    const result = await run(route, context, input, request.id);
    // A recording no procedure took (refused before it ran) is not kept.
    const left = context.recording.left();
    if (left) await removeRecording(services.media.store, left.key);
    if (!result.ok) return result.response;
    const { body, notes } = result.answer;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...(tag ? { etag: tag, ...REVALIDATE } : {}),
      ...Object.fromEntries(noteHeaders(notes)),
    };
    const link = notes.pagePosition && linkHeader(options.origin(req), url, notes.pagePosition);
    if (link) headers.link = link;
    const status = route.operation.meta.successStatus ?? 200;
    return new Response(answerJson(body), { status, headers });
  };

  const byPath = new Map<string, Route[]>();
  for (const route of restRoutes(operations)) {
    const path = `${REST_PREFIX}${route.operation.meta.openapi.path.replace(/\{(\w+)\}/g, ':$1')}`;
    api.on(route.method, path, answer(route));
    byPath.set(path, [...(byPath.get(path) ?? []), route]);
  }
  for (const [path, routes] of byPath) {
    api.all(path, () => restError('method_not_allowed', '', { allow: allowed(routes) }));
  }
  api.all(REST_PREFIX, () => restError('route_not_found'));
  api.all(`${REST_PREFIX}/*`, () => restError('route_not_found'));
}
