import { timingSafeEqual } from 'node:crypto';
import { databaseUnavailable } from '@convo/db';
import { originsForAuthority } from '@convo/domain';
import { createSite, type FormResult, type SiteLimits, siteLabel } from '@convo/pages';
import {
  type AppRouter,
  appRouter,
  createContext,
  ERRORS,
  type ErrorCode,
  errorBody,
  operations,
  type RequestState,
  trpcErrorShape,
} from '@convo/router';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import pkg from '../package.json' with { type: 'json' };
import { serveDocs } from './docs.ts';
import { decodeUtf8, formFields, HttpError, mediaType, readBody } from './http/body.ts';
import { operationLabels } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { createRestHandler, json, REST_PREFIX } from './rest/handler.ts';
import type { Services } from './services.ts';

export interface AppOptions {
  maxBodyBytes: number;
  /** A request not answered by then gets 503 `timeout` (default 10 s). */
  requestTimeoutMs?: number;
  /** A body must have arrived this long after reading began, or the answer is 408 (default 5 s). */
  bodyTimeoutMs?: number;
  /** The most calls one tRPC batch may carry (default 10). */
  maxBatch?: number;
  /** The origin absolute links are built on (`PUBLIC_URL`); unset, links are relative. */
  publicUrl?: string | undefined;
  /** Believe X-Forwarded-Host and X-Forwarded-Proto (`TRUST_PROXY`): only behind a proxy that sets them. */
  trustProxy?: boolean;
  /** The bearer token /metrics asks for (`METRICS_TOKEN`); unset, /metrics is not served. */
  metricsToken?: string | undefined;
  /** Rate limits of the sites' forms (`FORM_LIMIT_PER_IP`, `FORM_LIMIT_PER_EMAIL`). */
  formLimits?: SiteLimits;
}

/** What the runtime knows of a request beyond the Request itself. */
export interface Peer {
  /** The client's address as the socket saw it. */
  clientIp?: string | undefined;
}

export interface App {
  fetch(req: Request, peer?: Peer): Promise<Response>;
  /** From now on every response asks the client to close its connection (the server is stopping). */
  drain(): void;
}

/** One request as this handler tracks it: the procedures' state, and whether an account's site answered. */
interface Exchange extends RequestState {
  site: boolean;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const FORWARDED_HOST = /^[a-z0-9.-]{1,253}(:\d{1,5})?$/i;
const TRPC_PREFIX = '/trpc/';

/** The answer to a refused request, in the shape its transport speaks: tRPC's, or REST's `{error, code}`. */
function refusal(path: string, code: ErrorCode, detail = '', headers: Record<string, string> = {}): Response {
  const status = ERRORS[code].status;
  if (!path.startsWith(TRPC_PREFIX)) return json(status, errorBody(code, detail), headers);
  return json(status, { error: trpcErrorShape(code, detail, path.slice(TRPC_PREFIX.length) || undefined) }, headers);
}

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The whole HTTP surface as one fetch-standard handler, the same on Node and on Deno. */
export function createApp(services: Services, options: AppOptions, router: AppRouter = appRouter): App {
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const bodyLimits = { maxBytes: options.maxBodyBytes, timeoutMs: options.bodyTimeoutMs ?? 5_000 };
  const maxBatch = options.maxBatch ?? 10;
  const publicUrl = options.publicUrl?.replace(/\/+$/, '');

  /** What a proxy the operator trusts says the client asked for: the first hop's host and scheme. */
  function forwarded(req: Request): { host: string; proto: 'http' | 'https' } | null {
    if (!options.trustProxy) return null;
    const host = req.headers.get('x-forwarded-host')?.split(',')[0]?.trim();
    const proto = req.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
    if (!host || !FORWARDED_HOST.test(host) || (proto !== 'http' && proto !== 'https')) return null;
    return { host, proto };
  }

  /** Where absolute links point: configuration, or a proxy the operator trusts; never the raw Host. */
  function origin(req: Request): string | null {
    if (publicUrl) return publicUrl;
    const via = forwarded(req);
    return via ? `${via.proto}://${via.host}` : null;
  }

  /**
   * The account whose own host the request came to, if any: by its Host (url.host), or by what a
   * trusted proxy forwarded. Without a scheme from the proxy, either scheme's origin matches.
   */
  function siteAccount(req: Request, url: URL) {
    const via = forwarded(req);
    const origins = via ? originsForAuthority(via.host, via.proto) : originsForAuthority(url.host);
    return services.site.accountByHost(origins);
  }

  /** A site form's fields, through the same body reader as every route; its refusals as the error table says. */
  async function readForm(req: Request): Promise<FormResult> {
    if (mediaType(req) !== 'application/x-www-form-urlencoded') {
      return { ok: false, status: 415, message: 'Send the form as application/x-www-form-urlencoded.' };
    }
    try {
      const text = decodeUtf8(await readBody(req, bodyLimits));
      const fields = formFields(text);
      // URLSearchParams turns percent-encoded bytes that are not UTF-8 into U+FFFD: refuse them as
      // the raw body's own invalid bytes are, unless the replacement character was really sent.
      const replaced = [...fields.values()].some((values) => values.some((v) => v.includes('\uFFFD')));
      if (replaced && !text.includes('\uFFFD') && !/%EF%BF%BD/i.test(text)) {
        return { ok: false, status: 400, message: 'The form is not valid UTF-8 text.' };
      }
      return { ok: true, fields };
    } catch (e) {
      if (!(e instanceof HttpError) || e.code === 'client_closed') throw e;
      const status = ERRORS[e.code].status;
      const message = e.message || ERRORS[e.code].message || 'The form could not be read.';
      if (status === 400 || status === 408 || status === 413) return { ok: false, status, message };
      return { ok: false, status: 400, message };
    }
  }

  const site = createSite({
    site: services.site,
    people: services.people,
    replies: services.replies,
    outbox: services.outbox,
    limits: services.visitorLimits,
    readForm,
    rates: options.formLimits ?? { perIpPerMinute: 30, perEmailPer15Minutes: 5 },
    isUnavailable: services.isUnavailable,
    onError: (err) => services.logger.error({ err }, 'page failed'),
  });

  /** The client's address: the socket's, or the first hop a trusted proxy names. */
  function clientIp(req: Request, peer: Peer | undefined): string {
    if (options.trustProxy) {
      const first = req.headers.get('x-forwarded-for')?.split(',')[0]?.trim();
      if (first && /^[\da-f.:]{2,45}$/i.test(first)) return first;
    }
    return peer?.clientIp ?? 'unknown';
  }

  const rest = createRestHandler(operations, services, { body: bodyLimits, origin });
  const operationOf = operationLabels(REST_PREFIX, operations);
  let openApi: string | undefined;
  let draining = false;

  /** Endpoints beside the operations: each answers GET (and so HEAD) only. */
  const fixed = new Map<string, (req: Request, path: string) => Promise<Response> | Response>([
    [
      `${REST_PREFIX}/openapi.json`,
      () => {
        openApi ??= JSON.stringify(buildOpenApiDocument(operations, pkg.version));
        return new Response(openApi, { headers: { 'content-type': 'application/json' } });
      },
    ],
    ['/healthz', () => json(200, { status: 'ok' })],
    [
      '/readyz',
      async () => {
        const problem = await services.notReady();
        return problem ? json(503, errorBody('not_ready', problem)) : json(200, { status: 'ready' });
      },
    ],
    [
      '/metrics',
      async (req, path) => {
        // Off unless the operator set a token: the figures are for their scraper, not for anyone.
        if (!options.metricsToken) return refusal(path, 'route_not_found');
        const given = /^bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '')?.[1];
        if (!given || !sameSecret(given, options.metricsToken)) {
          return refusal(path, 'unauthorized', '', { 'www-authenticate': 'Bearer' });
        }
        const registry = services.metrics.registry;
        return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType } });
      },
    ],
  ]);

  /**
   * tRPC, with the limits every route has: at most `maxBatch` calls a request; a token checked
   * before a body is read (every procedure needs one); the body bounded in size and time.
   */
  async function trpc(req: Request, url: URL, request: RequestState): Promise<Response> {
    const path = url.pathname;
    const calls = path.slice(TRPC_PREFIX.length).split(',').length;
    if (url.searchParams.get('batch') === '1' && calls > maxBatch) {
      return refusal(path, 'batch_too_large', `a batch may carry at most ${maxBatch} calls`);
    }
    const context = createContext(services, req, request);
    let inner = req;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (!(await context.authenticate())) return refusal(path, 'unauthorized');
      const body = await readBody(req, bodyLimits);
      inner = new Request(req.url, { method: req.method, headers: req.headers, body, signal: req.signal });
    }
    return fetchRequestHandler({
      endpoint: '/trpc',
      req: inner,
      router,
      createContext: () => context,
      onError: ({ error }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR')
          services.logger.error({ err: error.cause ?? error, requestId: request.id }, 'request failed');
      },
    });
  }

  async function route(req: Request, url: URL, request: Exchange, peer?: Peer): Promise<Response> {
    const path = url.pathname;
    if (path.startsWith(TRPC_PREFIX)) return trpc(req, url, request);
    const endpoint = fixed.get(path);
    const docs = path === `${REST_PREFIX}/docs` || path.startsWith(`${REST_PREFIX}/docs/`);
    if (endpoint || docs) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return refusal(path, 'method_not_allowed', '', { allow: 'GET, HEAD' });
      }
      if (endpoint) return endpoint(req, path);
      return (await serveDocs(REST_PREFIX, path)) ?? refusal(path, 'route_not_found');
    }
    if (path === REST_PREFIX || path.startsWith(`${REST_PREFIX}/`)) return rest(req, url, request);
    // Anything else is an account's own site when the request came to its host. When the database
    // cannot say, a person may be looking at a page: the HTML retry page, not JSON.
    const account = await siteAccount(req, url).catch((err: unknown) => {
      if (services.isUnavailable(err)) return 'unavailable' as const;
      throw err;
    });
    if (account === 'unavailable') {
      request.site = true;
      return site.unavailable(req);
    }
    if (account) {
      request.notes.accountId = account.id;
      request.site = true;
      return site.fetch(req, account, { clientIp: clientIp(req, peer) });
    }
    return refusal(path, 'route_not_found');
  }

  /** The route's answer, or 503 when it takes longer than the request timeout. */
  function answer(req: Request, url: URL, request: Exchange, peer?: Peer): Promise<Response> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<Response>((resolve) => {
      timer = setTimeout(() => resolve(refusal(url.pathname, 'timeout')), timeoutMs);
    });
    return Promise.race([route(req, url, request, peer), late]).finally(() => clearTimeout(timer));
  }

  return {
    drain() {
      draining = true;
    },
    async fetch(req, peer) {
      const started = performance.now();
      const incoming = req.headers.get('x-request-id');
      const request: Exchange = {
        id: incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID(),
        notes: {},
        site: false,
      };
      // Parsed once here; routing and the REST adapter share it.
      const url = new URL(req.url);
      const path = url.pathname;
      let res: Response;
      try {
        res = await answer(req, url, request, peer);
      } catch (err) {
        if (err instanceof HttpError) {
          res = refusal(path, err.code, err.message);
        } else if (req.signal.aborted) {
          res = refusal(path, 'client_closed');
        } else if (databaseUnavailable(err)) {
          res = refusal(path, 'unavailable');
        } else {
          services.logger.error({ err, requestId: request.id }, 'unhandled error');
          res = refusal(path, 'internal');
        }
      }
      const headers = res.headers;
      headers.set('x-request-id', request.id);
      // Answers are not stored unless they say otherwise (pages, the API's conditional reads).
      if (!headers.has('cache-control')) headers.set('cache-control', 'no-store');
      const quota = request.notes.rateLimit;
      if (quota) {
        headers.set('ratelimit-limit', String(quota.limit));
        headers.set('ratelimit-remaining', String(quota.remaining));
        headers.set('ratelimit-reset', String(quota.resetSeconds));
        if (!quota.allowed) headers.set('retry-after', String(quota.resetSeconds));
      }
      if (request.notes.idempotentReplay) headers.set('idempotent-replayed', 'true');
      if (res.status === 503 && !headers.has('retry-after')) headers.set('retry-after', '1');
      // After a body that did not arrive whole, what is left on the connection cannot be trusted.
      if (draining || res.status === 408) headers.set('connection', 'close');
      // A client that went away gets no answer, and is no fault of ours: 499, as nginx counts it.
      const status = req.signal.aborted ? ERRORS.client_closed.status : res.status;
      const seconds = (performance.now() - started) / 1000;
      services.metrics.observe(request.site ? siteLabel(path) : operationOf(path), req.method, status, seconds);
      services.logger.info(
        {
          requestId: request.id,
          method: req.method,
          path,
          status,
          ms: Math.round(seconds * 1000),
          accountId: request.notes.accountId,
        },
        'request',
      );
      if (req.method === 'HEAD' && res.body && !path.startsWith(TRPC_PREFIX)) {
        return new Response(null, { status: res.status, headers });
      }
      return res;
    },
  };
}
