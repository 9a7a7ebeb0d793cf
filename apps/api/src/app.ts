import { databaseUnavailable } from '@convo/db';
import { type AppRouter, appRouter, createContext, errorBody, type RequestState } from '@convo/router';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import pkg from '../package.json' with { type: 'json' };
import { serveDocs } from './docs.ts';
import { operationOf } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { createRestHandler, json, REST_PREFIX } from './rest.ts';
import type { Services } from './services.ts';

export interface AppOptions {
  maxBodyBytes: number;
  /** A request not answered by then gets 503 `timeout` (default 10 s). */
  requestTimeoutMs?: number;
}

export interface App {
  fetch(req: Request): Promise<Response>;
  /** From now on every response asks the client to close its connection (the server is stopping). */
  drain(): void;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The whole HTTP surface as one fetch-standard handler, the same on Node and on Deno. */
export function createApp(services: Services, options: AppOptions, router: AppRouter = appRouter): App {
  const rest = createRestHandler(router, services, options);
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  let openApi: string | undefined;
  let draining = false;

  /** The route's answer, or 503 when it takes longer than the request timeout. */
  function answer(req: Request, url: URL, request: RequestState): Promise<Response> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<Response>((resolve) => {
      timer = setTimeout(() => resolve(json(503, errorBody('timeout'))), timeoutMs);
    });
    return Promise.race([route(req, url, request), late]).finally(() => clearTimeout(timer));
  }

  async function route(req: Request, url: URL, request: RequestState): Promise<Response> {
    const path = url.pathname;
    if (path === `${REST_PREFIX}/openapi.json` && req.method === 'GET') {
      openApi ??= JSON.stringify(buildOpenApiDocument(router, pkg.version));
      return new Response(openApi, { headers: { 'content-type': 'application/json' } });
    }
    if (req.method === 'GET' && (path === `${REST_PREFIX}/docs` || path.startsWith(`${REST_PREFIX}/docs/`))) {
      const page = await serveDocs(REST_PREFIX, path);
      if (page) return page;
    }
    if (path === REST_PREFIX || path.startsWith(`${REST_PREFIX}/`)) return rest(req, url, request);
    if (path.startsWith('/trpc/')) {
      return fetchRequestHandler({
        endpoint: '/trpc',
        req,
        router,
        createContext: () => createContext(services, req, request),
        onError: ({ error }) => {
          if (error.code === 'INTERNAL_SERVER_ERROR')
            services.logger.error({ err: error.cause ?? error }, 'request failed');
        },
      });
    }
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const problem = await services.notReady();
      return problem ? json(503, errorBody('not_ready', problem)) : json(200, { status: 'ready' });
    }
    if (path === '/metrics') {
      const registry = services.metrics.registry;
      return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType } });
    }
    return json(404, errorBody('route_not_found'));
  }

  return {
    drain() {
      draining = true;
    },
    async fetch(req) {
      const started = performance.now();
      const incoming = req.headers.get('x-request-id');
      const request: RequestState = {
        id: incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID(),
        notes: {},
      };
      // Parsed once here; routing and the REST adapter share it.
      const url = new URL(req.url);
      const path = url.pathname;
      let res: Response;
      try {
        res = await answer(req, url, request);
      } catch (err) {
        if (databaseUnavailable(err)) {
          res = json(503, errorBody('unavailable'));
        } else {
          services.logger.error({ err, requestId: request.id }, 'unhandled error');
          res = json(500, errorBody('internal'));
        }
      }
      const headers = res.headers;
      headers.set('x-request-id', request.id);
      headers.set('cache-control', 'no-store');
      const quota = request.notes.rateLimit;
      if (quota) {
        headers.set('ratelimit-limit', String(quota.limit));
        headers.set('ratelimit-remaining', String(quota.remaining));
        headers.set('ratelimit-reset', String(quota.resetSeconds));
        if (!quota.allowed) headers.set('retry-after', String(quota.resetSeconds));
      }
      if (request.notes.idempotentReplay) headers.set('idempotent-replayed', 'true');
      if (res.status === 503 && !headers.has('retry-after')) headers.set('retry-after', '1');
      if (draining) headers.set('connection', 'close');
      const seconds = (performance.now() - started) / 1000;
      services.metrics.observe(operationOf(path), req.method, res.status, seconds);
      services.logger.info(
        {
          requestId: request.id,
          method: req.method,
          path,
          status: res.status,
          ms: Math.round(seconds * 1000),
          accountId: request.notes.accountId,
        },
        'request',
      );
      return res;
    },
  };
}
