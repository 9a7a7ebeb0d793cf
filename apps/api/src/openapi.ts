import { MAX_PAGE, PAGE_SIZE } from '@convo/domain';
import { type AppRouter, ERRORS, type ErrorCode } from '@convo/router';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { REST_PREFIX } from './rest.ts';

/*
 * The OpenAPI 3.1 document: generated from the procedures' zod schemas by trpc-to-openapi, then
 * patched where the generator cannot say the truth: our error body for each status an operation
 * really returns, 201 for create, an optional create body, both auth forms, and examples.
 */

type Operation = Record<string, any>;

const example = {
  id: 42,
  title: 'Billing question',
  slug: 'billing-question',
  public: true,
  via_primary_intake_page: false,
  intake_page_id: null,
  conversation_url: 'https://acme.example.com/c/billing-question',
  conversation_embed_url: 'https://acme.example.com/embeds/conversations/acme/billing-question',
  anyone_can_post: true,
  allow_anonymous_messages: true,
  allow_search_engines: false,
  tags: [{ id: 3, name: 'billing' }],
  users: [{ id: 1, email: 'olive@acme.example.com', name: 'Olive Owner' }],
  messages: [
    {
      id: 7,
      conversation_id: 42,
      message_type: 'text',
      recorded_duration_seconds: 0,
      author: { anonymous: true },
      message_url: 'https://acme.example.com/c/billing-question#message-7',
      embed_message_url: 'https://acme.example.com/embeds/messages/acme/7&show_author=true',
      download_media_url: null,
      text: 'Why was I charged twice?',
    },
  ],
};
const { messages: _m, tags: _t, ...createdBase } = example;
const createdExample = { ...createdBase, tags: [], messages: [] };
const listedExample = { ...example, workflow: { id: 2, name: 'Support triage', steps: [{ action: 'assign' }] } };
const singleExample = {
  ...listedExample,
  conversation_created_time: '2022-02-01 17:21:09.123456',
  conversation_credated_time_nice: 'February 1st, 2022 05:21PM UTC',
};

const ERROR_EXAMPLES: Partial<Record<ErrorCode, string>> = {
  conversation_not_found: 'No conversations found',
  invalid_input: "slug: slug may contain only ASCII letters, digits, '_' and '-'",
  intake_page_unusable: 'intake page not found or not usable for this request',
  slug_taken: 'slug is already used by another conversation in this account',
  body_too_large: 'the request body is limited to 65536 bytes',
};

const errorResponse = (description: string, codes: ErrorCode[]) => ({
  description,
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/Error' },
      examples: Object.fromEntries(
        codes.map((code) => [code, { value: { error: ERROR_EXAMPLES[code] ?? ERRORS[code].message, code } }]),
      ),
    },
  },
});

const RETRY_AFTER = { $ref: '#/components/headers/Retry-After' };

const COMMON_ERRORS = {
  '401': errorResponse('No token, an unknown or revoked token, or a malformed Authorization header', ['unauthorized']),
  '429': {
    ...errorResponse("The token's rate limit for the current window is used up", ['rate_limited']),
    headers: { 'Retry-After': RETRY_AFTER },
  },
  '500': errorResponse('A fault of the service; never caused by anything a client sends', ['internal']),
  '503': {
    ...errorResponse('The database is unreachable or the request ran past its time limit; retry shortly', [
      'unavailable',
      'timeout',
    ]),
    headers: { 'Retry-After': RETRY_AFTER },
  },
};

/** What every answer to an authenticated request carries. */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
};

const HEADERS = {
  'RateLimit-Limit': {
    description: "Requests the token may make in the current window (the account's limit, or the server's).",
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window, across every server process.',
    schema: { type: 'integer' },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the window ends and the quota is whole again.',
    schema: { type: 'integer' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this answer is the stored first answer to a repeated Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

export function buildOpenApiDocument(router: AppRouter, version: string): OpenAPIObject {
  const doc = generateOpenApiDocument(router, {
    title: 'Conversations API',
    version,
    openApiVersion: '3.1.0',
    license: { name: 'MIT', identifier: 'MIT' },
    baseUrl: REST_PREFIX,
    description: [
      'Create, fetch and list the conversations of the account an API token belongs to.',
      '',
      'Authenticate with the token in the `Authorization` header, raw or as `Bearer <token>`.',
      'Every error is a JSON body `{"error": "<message>", "code": "<code>"}`; a refused request changes nothing.',
      `Pages count from 1 and hold up to ${PAGE_SIZE} conversations, newest created first.`,
      '',
      'Each token may make a limited number of requests per window (set per account by the operator); every answer',
      'to an authenticated request carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, and',
      'past the limit the answer is 429 with `Retry-After`. Every answer carries `Cache-Control: no-store`.',
    ].join('\n'),
    securitySchemes: {
      ApiToken: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'The account API token, raw (`Authorization: cnv_…`) or as `Bearer cnv_…`.',
      },
      BearerToken: { type: 'http', scheme: 'bearer', description: 'The account API token as a Bearer token.' },
    },
  });

  // Either scheme authenticates: OpenAPI reads a list of requirement objects as alternatives.
  const security = [{ ApiToken: [] }, { BearerToken: [] }];
  const paths = doc.paths as Record<string, Record<string, Operation>>;

  const create = paths['/conversations/create_conversation']?.post as Operation;
  create.security = security;
  create.description =
    'Every member is optional; omitted flags take the account defaults, an omitted title the account naming ' +
    'template, an omitted slug 25 random hex characters. Members a client may not set (`id`, URLs, ' +
    '`via_primary_intake_page`, …) are ignored. Form bodies take booleans as `true`/`false`.';
  create.requestBody.required = false;
  for (const media of Object.values(create.requestBody.content) as Operation[]) {
    media.examples = { titled: { value: { title: 'Billing question', slug: 'billing-question' } } };
  }
  create.requestBody.content['application/x-www-form-urlencoded'].examples = {
    titled: { value: { title: 'Billing question', slug: 'billing-question', anyone_can_post: true } },
  };
  const created = create.responses['200'];
  created.content['application/json'].example = createdExample;
  created.headers = { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } };
  create.parameters = [
    {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Up to 255 printable ASCII characters, remembered for 24 hours per account. A retry with the same key and ' +
        'the same body answers the first 201 again (status and body) and creates nothing; the same key with a ' +
        'different body is refused with 422 `idempotency_key_reused`. A concurrent retry waits for the first. ' +
        'Refused creates are not remembered: their retry runs again.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
      example: 'order-1234-conversation',
    },
  ];
  create.responses = {
    '201': created,
    '400': errorResponse('The body is not valid JSON', ['malformed_body']),
    ...COMMON_ERRORS,
    '409': errorResponse('The slug is already used by a conversation of this account (ignoring case)', ['slug_taken']),
    '413': errorResponse('The body is over the size limit', ['body_too_large']),
    '415': errorResponse('The body is neither JSON nor form-encoded', ['unsupported_media_type']),
    '422': errorResponse(
      'A member breaks its rule, the intake page cannot be used, or the Idempotency-Key was used with another body',
      ['invalid_input', 'intake_page_unusable', 'idempotency_key_reused'],
    ),
  };

  const get = paths['/conversations/get_conversation']?.get as Operation;
  get.security = security;
  get.description =
    'Title and slug match exactly, ignoring case; the most recently created match wins (ties: the higher id). ' +
    'When both are given both must match. With no parameter, or no match, the most recent conversation is returned.';
  get.responses['200'].content['application/json'].example = singleExample;
  get.responses = {
    '200': get.responses['200'],
    ...COMMON_ERRORS,
    '404': errorResponse('The account has no conversation', ['conversation_not_found']),
    '422': errorResponse('A parameter is given twice', ['invalid_input']),
  };

  const list = paths['/conversations/get_conversations']?.get as Operation;
  list.security = security;
  list.description = `Up to ${PAGE_SIZE} conversations a page, newest created first; pages count from 1 (at most ${MAX_PAGE}).`;
  list.responses['200'].content['application/json'].example = { conversations: [listedExample] };
  list.responses['200'].headers = {
    Link: {
      description:
        'GitHub-style links to the next, previous and first pages (`rel="next"`, `rel="prev"`, `rel="first"`), ' +
        'each present only when that page exists.',
      schema: { type: 'string' },
      example: '<https://api.example.com/api/v1/conversations/get_conversations?page=3>; rel="next"',
    },
  };
  list.responses = {
    '200': list.responses['200'],
    ...COMMON_ERRORS,
    '404': errorResponse('The account has no conversations, or the page is past the last one', [
      'conversation_not_found',
    ]),
    '422': errorResponse('The page is not a whole number from 1', ['invalid_input']),
  };

  for (const op of [create, get, list]) {
    for (const [status, response] of Object.entries(op.responses as Record<string, Operation>)) {
      if (status !== '401') response.headers = { ...RATE_LIMIT_HEADERS, ...response.headers };
    }
  }

  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  schemas.Error = {
    type: 'object',
    required: ['error', 'code'],
    properties: {
      error: { type: 'string', description: 'A human-readable message.' },
      code: { type: 'string', enum: Object.keys(ERRORS), description: 'A machine-readable code.' },
    },
  };
  (doc.components as Record<string, unknown>).headers = HEADERS;
  doc.servers = [{ url: REST_PREFIX, description: 'This server' }];
  return doc;
}
