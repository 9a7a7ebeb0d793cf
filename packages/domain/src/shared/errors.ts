import { MAX_INTAKE_PAGES, MAX_MESSAGE_TEMPLATES, MAX_WEBHOOK_ENDPOINTS, MAX_WORKFLOWS } from './limits.ts';

/**
 * Every rule violation the domain can report, each with its message and an example of what a
 * client reads (the OpenAPI document shows the examples). A null message: each case words its
 * own (which input, which page), and the example is one of them. The API maps each code to its
 * transport status in one table (packages/router/src/errors.ts); nothing else writes these texts.
 */
export const DOMAIN_ERRORS = {
  conversation_not_found: { message: 'No conversations found', example: null },
  message_not_found: { message: 'No messages found', example: null },
  invalid_input: { message: null, example: "slug: slug may contain only ASCII letters, digits, '_' and '-'" },
  slug_taken: { message: 'slug is already used by another conversation in this account', example: null },
  intake_page_unusable: { message: null, example: 'intake page not found or not usable for this request' },
  intake_page_not_found: { message: 'no intake page with this id in this account', example: null },
  intake_page_key_taken: { message: 'key is already used by another intake page of this account', example: null },
  intake_page_limit_reached: {
    message: `an account may have at most ${MAX_INTAKE_PAGES} intake pages`,
    example: null,
  },
  idempotency_key_reused: {
    message: 'this Idempotency-Key was already used with a different request',
    example: null,
  },
  webhook_not_found: { message: 'no webhook endpoint with this id in this account', example: null },
  webhook_target_refused: { message: null, example: 'the endpoint resolves to a non-public address (10.0.0.7)' },
  webhook_limit_reached: {
    message: `an account may have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`,
    example: null,
  },
  workflow_not_found: { message: 'no workflow with this id in this account', example: null },
  workflow_limit_reached: {
    message: `an account may have at most ${MAX_WORKFLOWS} workflows; disable or change one`,
    example: null,
  },
  message_template_not_found: { message: 'no message template with this id in this account', example: null },
  message_template_name_taken: {
    message: 'name is already used by another message template of this account',
    example: null,
  },
  message_template_limit_reached: {
    message: `an account may keep at most ${MAX_MESSAGE_TEMPLATES} message templates; delete one first`,
    example: null,
  },
  forbidden: { message: null, example: "only the account's owners and admins manage intake pages and workflows" },
  recording_busy: {
    message: 'the server is measuring too many recordings just now; send it again in a moment',
    example: null,
  },
} as const satisfies Record<string, { message: string | null; example: string | null }>;

export type DomainErrorCode = keyof typeof DOMAIN_ERRORS;

/** The codes whose message is always the table's. */
export type FixedMessageCode = {
  [K in DomainErrorCode]: (typeof DOMAIN_ERRORS)[K]['message'] extends string ? K : never;
}[DomainErrorCode];

/** The codes each case words itself (the table's message is null). */
export type WordedCode = Exclude<DomainErrorCode, FixedMessageCode>;

/** What a client reads for `code`: its message, or the example of one. */
export const domainErrorExample = (code: DomainErrorCode): string =>
  DOMAIN_ERRORS[code].message ?? DOMAIN_ERRORS[code].example ?? code;

export class DomainError extends Error {
  readonly code: DomainErrorCode;

  constructor(code: FixedMessageCode);
  constructor(code: WordedCode, message: string);
  constructor(code: DomainErrorCode, message?: string) {
    super(DOMAIN_ERRORS[code].message ?? message ?? code);
    this.name = 'DomainError';
    this.code = code;
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
