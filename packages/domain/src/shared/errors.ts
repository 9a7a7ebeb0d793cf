/**
 * Every rule violation the domain can report. The API maps each code to a transport
 * status and a public message in one table (packages/router/src/errors.ts).
 */
export type DomainErrorCode =
  | 'conversation_not_found'
  | 'invalid_input'
  | 'slug_taken'
  | 'intake_page_unusable'
  | 'intake_page_not_found'
  | 'intake_page_key_taken'
  | 'intake_page_limit_reached'
  | 'idempotency_key_reused'
  | 'webhook_not_found'
  | 'webhook_target_refused'
  | 'webhook_limit_reached'
  | 'workflow_not_found'
  | 'workflow_limit_reached'
  | 'unauthorized'
  | 'forbidden';

export class DomainError extends Error {
  readonly code: DomainErrorCode;

  constructor(code: DomainErrorCode, message: string) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
