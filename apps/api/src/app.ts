import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import pkg from '../package.json' with { type: 'json' };
import { createContext, type Services } from './context.ts';
import { errorBody } from './errors.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { createRestHandler, json, REST_PREFIX } from './rest.ts';
import { type AppRouter, appRouter } from './router.ts';

export interface AppOptions {
  maxBodyBytes: number;
}

export interface App {
  fetch(req: Request): Promise<Response>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The whole HTTP surface as one fetch-standard handler, the same on Node and on Deno. */
export function createApp(services: Services, options: AppOptions, router: AppRouter = appRouter): App {
  const rest = createRestHandler(router, services, options);
  let openApi: string | undefined;

  async function route(req: Request, path: string, requestId: string): Promise<Response> {
    if (path === `${REST_PREFIX}/openapi.json` && req.method === 'GET') {
      openApi ??= JSON.stringify(buildOpenApiDocument(router, pkg.version));
      return new Response(openApi, { headers: { 'content-type': 'application/json' } });
    }
    if (path === REST_PREFIX || path.startsWith(`${REST_PREFIX}/`)) return rest(req, requestId);
    if (path.startsWith('/trpc/')) {
      return fetchRequestHandler({
        endpoint: '/trpc',
        req,
        router,
        createContext: () => createContext(services, req, requestId),
        onError: ({ error }) => {
          if (error.code === 'INTERNAL_SERVER_ERROR')
            services.logger.error({ err: error.cause ?? error }, 'request failed');
        },
      });
    }
    if (path === '/healthz') return json(200, { status: 'ok' });
    return json(404, errorBody('route_not_found'));
  }

  return {
    async fetch(req) {
      const started = performance.now();
      const incoming = req.headers.get('x-request-id');
      const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
      const path = new URL(req.url).pathname;
      let res: Response;
      try {
        res = await route(req, path, requestId);
      } catch (err) {
        services.logger.error({ err, requestId }, 'unhandled error');
        res = json(500, errorBody('internal'));
      }
      res.headers.set('x-request-id', requestId);
      res.headers.set('cache-control', 'no-store');
      services.logger.info(
        { requestId, method: req.method, path, status: res.status, ms: Math.round(performance.now() - started) },
        'request',
      );
      return res;
    },
  };
}
