import { DOMAIN_ERRORS, type DomainErrorCode, domainErrorExample } from '@convo/domain';
import { type TRPC_ERROR_CODE_KEY, TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';

/** A transport's own refusal: its status and its public message (null: each case words its own, as the example shows). */
interface TransportError {
  trpc: TRPC_ERROR_CODE_KEY;
  status: number;
  message: string | null;
  example?: string;
}

/**
 * The one table: error code → tRPC code → HTTP status → public message. Every domain code is here
 * (the compiler holds it to DomainErrorCode) with a null message: the error carries the domain's
 * own (DOMAIN_ERRORS words it, with its example); the transport's codes have theirs here.
 */
export const ERRORS = {
  conversation_not_found: { trpc: 'NOT_FOUND', status: 404, message: null },
  message_not_found: { trpc: 'NOT_FOUND', status: 404, message: null },
  invalid_input: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  intake_page_unusable: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  intake_page_not_found: { trpc: 'NOT_FOUND', status: 404, message: null },
  intake_page_key_taken: { trpc: 'CONFLICT', status: 409, message: null },
  intake_page_limit_reached: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  slug_taken: { trpc: 'CONFLICT', status: 409, message: null },
  webhook_not_found: { trpc: 'NOT_FOUND', status: 404, message: null },
  webhook_target_refused: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  webhook_limit_reached: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  workflow_not_found: { trpc: 'NOT_FOUND', status: 404, message: null },
  workflow_limit_reached: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  message_template_not_found: { trpc: 'NOT_FOUND', status: 404, message: null },
  message_template_name_taken: { trpc: 'CONFLICT', status: 409, message: null },
  message_template_limit_reached: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  reply_address_not_found: {
    trpc: 'NOT_FOUND',
    status: 404,
    message: 'the mail is not to a reply address of this server',
  },
  unauthorized: {
    trpc: 'UNAUTHORIZED',
    status: 401,
    message: 'a valid API token is required in the Authorization header',
  },
  forbidden: { trpc: 'FORBIDDEN', status: 403, message: null },
  recording_busy: { trpc: 'SERVICE_UNAVAILABLE', status: 503, message: null },
  malformed_body: { trpc: 'BAD_REQUEST', status: 400, message: 'the request body is not valid JSON or form data' },
  bad_request: { trpc: 'BAD_REQUEST', status: 400, message: 'the request is not valid HTTP' },
  batch_too_large: { trpc: 'BAD_REQUEST', status: 400, message: null, example: 'a batch may carry at most 10 calls' },
  body_too_large: {
    trpc: 'PAYLOAD_TOO_LARGE',
    status: 413,
    message: null,
    example: 'the request body is limited to 65536 bytes',
  },
  header_too_large: { trpc: 'BAD_REQUEST', status: 431, message: 'the request headers are too large' },
  unsupported_media_type: {
    trpc: 'UNSUPPORTED_MEDIA_TYPE',
    status: 415,
    message:
      'send the body as application/json or application/x-www-form-urlencoded (create_message also takes multipart/form-data)',
  },
  json_sent_as_form: {
    trpc: 'UNSUPPORTED_MEDIA_TYPE',
    status: 415,
    message:
      'the body is JSON but its content type says it is a form (curl -d does that): send it with content-type: application/json',
  },
  route_not_found: { trpc: 'NOT_FOUND', status: 404, message: 'no such endpoint' },
  method_not_allowed: { trpc: 'METHOD_NOT_SUPPORTED', status: 405, message: 'method not allowed on this endpoint' },
  request_timeout: {
    trpc: 'TIMEOUT',
    status: 408,
    message: 'the request did not arrive in time; send it again on a new connection',
  },
  rate_limited: {
    trpc: 'TOO_MANY_REQUESTS',
    status: 429,
    message: "this token's rate limit is used up; retry after the seconds in Retry-After",
  },
  idempotency_key_reused: { trpc: 'UNPROCESSABLE_CONTENT', status: 422, message: null },
  /** Never sent: the client went away first. Counted apart in metrics and logs, as nginx does. */
  client_closed: { trpc: 'CLIENT_CLOSED_REQUEST', status: 499, message: 'the client closed the connection' },
  unavailable: {
    trpc: 'SERVICE_UNAVAILABLE',
    status: 503,
    message: 'the service is temporarily unavailable; retry shortly',
  },
  timeout: { trpc: 'SERVICE_UNAVAILABLE', status: 503, message: 'the request took too long; retry shortly' },
  not_ready: { trpc: 'SERVICE_UNAVAILABLE', status: 503, message: null, example: 'database migrations are pending' },
  internal: { trpc: 'INTERNAL_SERVER_ERROR', status: 500, message: 'internal server error' },
} as const satisfies Record<DomainErrorCode, TransportError & { message: null }> & Record<string, TransportError>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * The code for a tRPC error that did not come from our table: the library's own (an unknown
 * procedure, a body that is not JSON, a wrong method). Their texts are never shown (a parse
 * error's would echo V8's message); the table's message is.
 */
const LIBRARY_CODES: Partial<Record<TRPC_ERROR_CODE_KEY, ErrorCode>> = {
  PARSE_ERROR: 'malformed_body',
  BAD_REQUEST: 'malformed_body',
  NOT_FOUND: 'route_not_found',
  METHOD_NOT_SUPPORTED: 'method_not_allowed',
  PAYLOAD_TOO_LARGE: 'body_too_large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  TIMEOUT: 'request_timeout',
  CLIENT_CLOSED_REQUEST: 'client_closed',
  TOO_MANY_REQUESTS: 'rate_limited',
  UNAUTHORIZED: 'unauthorized',
};

export const codeForTrpc = (trpc: TRPC_ERROR_CODE_KEY): ErrorCode => LIBRARY_CODES[trpc] ?? 'internal';

export const publicMessage = (code: ErrorCode, detail: string): string => ERRORS[code].message ?? detail;

/** The body of every REST error. */
export const errorBody = (code: ErrorCode, detail = ''): { error: string; code: ErrorCode } => ({
  error: publicMessage(code, detail),
  code,
});

/** The error of a tRPC answer, as every tRPC error is shaped: by the error formatter, or by the transport. */
export interface TrpcErrorShape {
  message: string;
  code: number;
  data: { code: TRPC_ERROR_CODE_KEY; httpStatus: number; path: string | undefined; appCode: ErrorCode };
}

export function trpcErrorShape(code: ErrorCode, detail: string, path: string | undefined): TrpcErrorShape {
  const row = ERRORS[code];
  return {
    message: publicMessage(code, detail),
    code: TRPC_ERROR_CODES_BY_KEY[row.trpc],
    data: { code: row.trpc, httpStatus: row.status, path, appCode: code },
  };
}

const isDomainCode = (code: ErrorCode): code is DomainErrorCode => Object.hasOwn(DOMAIN_ERRORS, code);

/** What a client may read for `code`, for the OpenAPI document's examples: the domain's, or the transport's. */
export function errorExample(code: ErrorCode): string {
  if (isDomainCode(code)) return domainErrorExample(code);
  const row: TransportError = ERRORS[code];
  return row.message ?? row.example ?? code;
}
