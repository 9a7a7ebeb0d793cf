import type { DomainErrorCode } from '@convo/domain';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';

/**
 * The one table: error code → tRPC code → HTTP status → public message. A null message means the
 * domain's own message is safe and precise enough to show (it never carries internal detail).
 */
export const ERRORS = {
  conversation_not_found: { trpc: 'NOT_FOUND', status: 404, message: null },
  invalid_input: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  intake_page_unusable: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  slug_taken: { trpc: 'CONFLICT', status: 409, message: null },
  unauthorized: {
    trpc: 'UNAUTHORIZED',
    status: 401,
    message: 'a valid API token is required in the Authorization header',
  },
  malformed_body: { trpc: 'BAD_REQUEST', status: 400, message: 'the request body is not valid JSON or form data' },
  body_too_large: { trpc: 'PAYLOAD_TOO_LARGE', status: 413, message: null },
  unsupported_media_type: {
    trpc: 'UNSUPPORTED_MEDIA_TYPE',
    status: 415,
    message: 'send the body as application/json or application/x-www-form-urlencoded',
  },
  route_not_found: { trpc: 'NOT_FOUND', status: 404, message: 'no such endpoint' },
  method_not_allowed: { trpc: 'METHOD_NOT_SUPPORTED', status: 405, message: 'method not allowed on this endpoint' },
  rate_limited: {
    trpc: 'TOO_MANY_REQUESTS',
    status: 429,
    message: "this token's rate limit is used up; retry after the seconds in Retry-After",
  },
  idempotency_key_reused: {
    trpc: 'UNPROCESSABLE_CONTENT',
    status: 422,
    message: 'this Idempotency-Key was already used with a different request',
  },
  unavailable: {
    trpc: 'SERVICE_UNAVAILABLE',
    status: 503,
    message: 'the service is temporarily unavailable; retry shortly',
  },
  timeout: { trpc: 'SERVICE_UNAVAILABLE', status: 503, message: 'the request took too long; retry shortly' },
  not_ready: { trpc: 'SERVICE_UNAVAILABLE', status: 503, message: null },
  internal: { trpc: 'INTERNAL_SERVER_ERROR', status: 500, message: 'internal server error' },
} as const satisfies Record<
  DomainErrorCode | string,
  { trpc: TRPC_ERROR_CODE_KEY; status: number; message: string | null }
>;

export type ErrorCode = keyof typeof ERRORS;

/** The code for a tRPC error that did not come from our table (e.g. a library's own). */
export function codeForTrpc(trpc: TRPC_ERROR_CODE_KEY): ErrorCode {
  if (trpc === 'PARSE_ERROR') return 'malformed_body';
  const found = (Object.keys(ERRORS) as ErrorCode[]).find((c) => ERRORS[c].trpc === trpc);
  return found ?? 'internal';
}

export const publicMessage = (code: ErrorCode, detail: string): string => ERRORS[code].message ?? detail;

/** The body of every REST error. */
export const errorBody = (code: ErrorCode, detail = ''): { error: string; code: ErrorCode } => ({
  error: publicMessage(code, detail),
  code,
});
