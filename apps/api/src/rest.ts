import type { PagePosition } from '@convo/domain';
import {
  type AppRouter,
  type Context,
  createContext,
  ERRORS,
  type ErrorCode,
  errorBody,
  type Meta,
  type RequestState,
} from '@convo/router';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Services } from './services.ts';

/*
 * REST v1 on top of trpc-to-openapi's core handler. The library's fetch adapter rebuilds that
 * handler on every request (and regenerates the whole OpenAPI document outside production), so
 * this adapter builds it once. It also parses bodies itself: JSON and form-encoded (which the
 * library refuses with 415), within a size limit, and gives every error our `{error, code}` body.
 */

export const REST_PREFIX = '/api/v1';

interface Route {
  path: string;
  method: string;
  procedure: string;
  meta: Meta;
  input: z.ZodType | undefined;
}

function restRoutes(router: AppRouter): Route[] {
  return Object.entries(router._def.procedures).flatMap(([name, p]) => {
    const def = (p as unknown as { _def: { meta?: Meta; inputs: z.ZodType[] } })._def;
    const openapi = def.meta?.openapi;
    if (!openapi || openapi.enabled === false || !def.meta) return [];
    return [{ path: openapi.path, method: openapi.method, procedure: name, meta: def.meta, input: def.inputs[0] }];
  });
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const fail = (status: number, code: ErrorCode, detail = '', headers: Record<string, string> = {}) =>
  json(status, errorBody(code, detail), headers);

type FieldKind = 'boolean' | 'number' | 'other';

/** What each member of an object schema holds, seen through optional/default/pipe wrappers. */
function fieldKinds(schema: z.ZodType | undefined): Map<string, FieldKind> {
  const kinds = new Map<string, FieldKind>();
  if (!(schema instanceof z.ZodObject)) return kinds;
  for (const [key, member] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    let s: z.core.$ZodType = member;
    for (;;) {
      const def = s._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType };
      if (def.innerType) s = def.innerType;
      else if (def.type === 'pipe' && def.in) s = def.in;
      else break;
    }
    const type = s._zod.def.type;
    kinds.set(key, type === 'boolean' ? 'boolean' : type === 'number' ? 'number' : 'other');
  }
  return kinds;
}

/** Form fields are strings: `true`/`false` and digits become what the schema asks for. */
function fromForm(text: string, kinds: Map<string, FieldKind>): Record<string, unknown> {
  const params = new URLSearchParams(text);
  const out: Record<string, unknown> = Object.create(null);
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key).map((v): unknown => {
      const kind = kinds.get(key);
      if (kind === 'boolean' && (v === 'true' || v === 'false')) return v === 'true';
      if (kind === 'number' && /^-?\d{1,16}$/.test(v)) return Number(v);
      return v;
    });
    out[key] = values.length === 1 ? values[0] : values;
  }
  return out;
}

class BodyError extends Error {
  readonly status: number;
  readonly code: ErrorCode;

  constructor(status: number, code: ErrorCode, detail = '') {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

async function readText(req: Request, limit: number): Promise<string> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  const tooLarge = () => new BodyError(413, 'body_too_large', `the request body is limited to ${limit} bytes`);
  if (declared > limit) throw tooLarge();
  // A declared length within the limit can be read whole, on the server adapter's fast path;
  // an undeclared (chunked) body is read chunk by chunk and cut off at the limit.
  if (req.headers.has('content-length')) return decodeUtf8(new Uint8Array(await req.arrayBuffer()));
  if (!req.body) return '';
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return decodeUtf8(bytes);
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new BodyError(400, 'malformed_body');
  }
}

async function readBody(req: Request, limit: number, kinds: Map<string, FieldKind>): Promise<unknown> {
  const text = await readText(req, limit);
  const type = (req.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  // No body at all is an empty request: every field of create_conversation is optional.
  if (
    text.trim() === '' &&
    (type === '' || type === 'application/json' || type === 'application/x-www-form-urlencoded')
  ) {
    return {};
  }
  if (type === 'application/json' || type.endsWith('+json')) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new BodyError(400, 'malformed_body');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new BodyError(422, 'invalid_input', 'the request body must be a JSON object');
    }
    return body;
  }
  if (type === 'application/x-www-form-urlencoded') return fromForm(text, kinds);
  throw new BodyError(415, 'unsupported_media_type');
}

/**
 * Query parameters as the core handler expects them (each a list of values), in an object with no
 * prototype: the library's own parser collects them into `{}`, where `?constructor=` or
 * `?__proto__=` reach Object.prototype and crash it (a 500 found by fuzzing).
 */
function queryOf(url: URL): Record<string, string[]> {
  const query: Record<string, string[]> = Object.create(null);
  for (const [key, value] of url.searchParams) {
    const values = query[key];
    if (values) values.push(value);
    else query[key] = [value];
  }
  return query;
}

/**
 * The Request the core handler sees: its path relative to the prefix, its body already parsed
 * (so, whatever the client sent, it is JSON now: the core refuses any other content type).
 */
function proxied(req: Request, url: URL, path: string, method: string, body: unknown): Request {
  let headers: Headers | undefined;
  const query = queryOf(url);
  const inner = `${url.origin}${path}${url.search}`;
  return new Proxy(req, {
    get(target, prop) {
      if (prop === 'url') return inner;
      if (prop === 'method') return method;
      if (prop === 'query') return query;
      if (prop === 'body') return body;
      if (prop === 'headers' && body !== undefined) {
        headers ??= new Headers(target.headers);
        headers.set('content-type', 'application/json');
        return headers;
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** GitHub-style paging links: next, prev and first, each only when that page exists. */
function linkHeader(url: URL, position: PagePosition): string | undefined {
  const to = (page: number, rel: string) => {
    const target = new URL(url);
    target.searchParams.set('page', String(page));
    return `<${target.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (position.hasNext) links.push(to(position.page + 1, 'next'));
  if (position.hasPrevious) links.push(to(position.page - 1, 'prev'), to(1, 'first'));
  return links.length > 0 ? links.join(', ') : undefined;
}

interface CoreResponse {
  statusCode: number;
  setHeader(key: string, value: string | string[]): void;
  end(body: string | undefined): void;
}

export function createRestHandler(router: AppRouter, services: Services, options: { maxBodyBytes: number }) {
  const routes = restRoutes(router);
  const byPath = new Map<string, Route[]>();
  for (const r of routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  const byProcedure = new Map(routes.map((r) => [r.procedure, r]));
  const kinds = new Map(routes.map((r) => [r.procedure, fieldKinds(r.input)]));
  const contexts = new WeakMap<Request, Context>();

  const core = createOpenApiNodeHttpHandler<AppRouter, never, never>({
    router,
    createContext: ({ req }: { req: Request }) => contexts.get(req) as Context,
    responseMeta: ({ paths, errors }: { paths?: string[]; errors: unknown[] }) => {
      const status = errors.length === 0 && paths?.[0] ? byProcedure.get(paths[0])?.meta.successStatus : undefined;
      return status ? { status } : {};
    },
    onError: ({ error }: { error: { code: string; cause?: unknown } }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR')
        services.logger.error({ err: error.cause ?? error }, 'request failed');
    },
  } as never) as unknown as (req: Request, res: CoreResponse) => Promise<void>;

  return async function handleRest(req: Request, url: URL, request: RequestState): Promise<Response> {
    const path = url.pathname.slice(REST_PREFIX.length).replace(/\/+$/, '') || '/';
    const candidates = byPath.get(path);
    if (!candidates) return fail(404, 'route_not_found');
    // HEAD is GET without the body, as HTTP has it.
    const head = req.method === 'HEAD';
    const method = head ? 'GET' : req.method;
    const route = candidates.find((r) => r.method === method);
    if (!route) {
      const allow = candidates.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method]));
      return fail(405, 'method_not_allowed', '', { allow: allow.join(', ') });
    }

    let body: unknown;
    if (route.method !== 'GET') {
      try {
        body = await readBody(req, options.maxBodyBytes, kinds.get(route.procedure) ?? new Map());
      } catch (e) {
        if (e instanceof BodyError) return fail(e.status, e.code, e.message);
        throw e;
      }
    }
    const inner = proxied(req, url, path, method, body);
    const context = createContext(services, req, request);
    contexts.set(inner, context);

    return new Promise<Response>((resolve, reject) => {
      const headers = new Headers();
      const res: CoreResponse = {
        statusCode: 200,
        setHeader: (key, value) => {
          for (const v of Array.isArray(value) ? value : [value]) headers.append(key, v);
        },
        end: (text) => {
          if (res.statusCode < 400) {
            const link = context.notes.pagePosition && linkHeader(url, context.notes.pagePosition);
            if (link) headers.set('link', link);
            resolve(new Response(head ? null : text, { status: res.statusCode, headers }));
            return;
          }
          // The library's error shape is {message, code, data}; ours is {error, code}.
          const shape = JSON.parse(text ?? '{}') as { message?: string; data?: { appCode?: ErrorCode } };
          const code = shape.data?.appCode ?? 'internal';
          resolve(fail(ERRORS[code]?.status ?? res.statusCode, code, shape.message ?? ''));
        },
      };
      core(inner, res).catch(reject);
    });
  };
}
