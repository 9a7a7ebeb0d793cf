import { ERRORS, type ErrorCode, errorBody, type RequestState, trpcErrorShape } from '@convo/router';
import { bodyWasCut } from './body.ts';
import type { Peer } from './peer.ts';

/*
 * What every answer of the API's host gets on its way out, whichever route made it: the error in
 * its transport's shape, and the headers that come from the request's state.
 */

/** What the API host's Hono app keeps per request (set by its first middleware, app.ts). */
export interface ApiEnv {
  /** What the runtime adapter passes beside the request (serve-node.ts, entry/deno.ts). */
  Bindings: { peer: Peer | undefined };
  Variables: {
    request: RequestState;
    /** The request's URL, parsed once. */
    url: URL;
  };
}

/** A JSON answer. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export const TRPC_PREFIX = '/trpc/';

/** The answer to a refused request, in the shape its transport speaks: tRPC's, or REST's `{error, code}`. */
export function errorAnswer(
  path: string,
  code: ErrorCode,
  detail = '',
  headers: Record<string, string> = {},
): Response {
  const status = ERRORS[code].status;
  if (!path.startsWith(TRPC_PREFIX)) return json(status, errorBody(code, detail), headers);
  return json(status, { error: trpcErrorShape(code, detail, path.slice(TRPC_PREFIX.length) || undefined) }, headers);
}

/** Whether the request came with a body (declared, or chunked). */
const hasBody = (req: Request): boolean =>
  req.body !== null && (req.headers.has('transfer-encoding') || Number(req.headers.get('content-length') ?? '0') > 0);

/** The headers every answer carries: its request id, caching, the token's quota. */
export function finishHeaders(req: Request, res: Response, request: RequestState, draining: boolean): void {
  const headers = res.headers;
  headers.set('x-request-id', request.id);
  // Answers are not stored unless they say otherwise (pages, the API's conditional reads).
  if (!headers.has('cache-control')) headers.set('cache-control', 'no-store');
  const quota = request.auth.rateLimit;
  if (quota) {
    headers.set('ratelimit-limit', String(quota.limit));
    headers.set('ratelimit-remaining', String(quota.remaining));
    headers.set('ratelimit-reset', String(quota.resetSeconds));
    if (!quota.allowed) headers.set('retry-after', String(quota.resetSeconds));
  }
  if (res.status === 503 && !headers.has('retry-after')) headers.set('retry-after', '1');
  // After a body that did not arrive whole, a refusal that left it unread (a declared length over
  // the limit, no token), or one cut off at the limit (chunked: what is left of it is still on
  // the way, on every route that limits bodies), what is left on the connection cannot be trusted:
  // the client is told to close it, rather than have the socket reset under its next request. A
  // body read whole and then refused (too many form fields) leaves the connection as it was.
  const unread = res.status >= 400 && hasBody(req) && !req.bodyUsed;
  const cutOff = bodyWasCut(req) || (res.status === 413 && !req.headers.has('content-length'));
  if (draining || res.status === 408 || cutOff || unread) headers.set('connection', 'close');
}
