import { appRouter, createContext, FORMER_TRPC_PATHS, operations, type RequestState } from '@convo/router';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { errorAnswer, TRPC_PREFIX } from './answers.ts';
import { type BodyLimits, readBody } from './body.ts';
import type { Services } from './services.ts';

/**
 * tRPC over HTTP (`/trpc/<procedure>`, batches too), with the limits every route has: at most
 * `maxBatch` calls a request, no body read without a token (the procedure refuses the call
 * before its input), the body bounded in size and time.
 */
export function trpcEndpoint(services: Services, limits: { maxBatch: number; body: BodyLimits }) {
  const procedurePaths = new Set(operations.map((operation) => operation.path));
  return async function trpc(req: Request, url: URL, request: RequestState): Promise<Response> {
    const path = url.pathname;
    // A former path is answered, and counted, as the procedure it names now.
    const current = currentPaths(path);
    const named = current.slice(TRPC_PREFIX.length);
    if (procedurePaths.has(named)) request.label = `trpc:${named}`;
    const calls = path.slice(TRPC_PREFIX.length).split(',').length;
    if (url.searchParams.get('batch') === '1' && calls > limits.maxBatch) {
      return errorAnswer(path, 'batch_too_large', `a batch may carry at most ${limits.maxBatch} calls`);
    }
    const context = createContext(services, req, request);
    const target = new URL(url);
    target.pathname = current;
    let inner = target.pathname === path ? req : new Request(target, req);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const body = (await context.authenticate()) ? await readBody(req, limits.body) : null;
      inner = new Request(target, { method: req.method, headers: req.headers, body, signal: req.signal });
    }
    return fetchRequestHandler({
      endpoint: '/trpc',
      req: inner,
      router: appRouter,
      // tRPC's own response headers carry what an answer notes (answer.ts).
      createContext: ({ resHeaders }) => ({ ...context, resHeaders }),
      onError: ({ error }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR')
          services.logger.error({ err: error.cause ?? error, requestId: request.id }, 'request failed');
      },
    });
  };
}

/** A call's path with each procedure a former path names (FORMER_TRPC_PATHS) under its current one. */
function currentPaths(path: string): string {
  const named = path.slice(TRPC_PREFIX.length).split(',');
  return `${TRPC_PREFIX}${named.map((n) => FORMER_TRPC_PATHS[n] ?? n).join(',')}`;
}
