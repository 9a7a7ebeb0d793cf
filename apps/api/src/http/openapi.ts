import {
  PAGE_SIZE,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  ZMessagePlayedEvent,
  ZMessageTranscribedEvent,
  ZReactionAddedEvent,
} from '@convo/domain';
import {
  ERRORS,
  type ErrorCode,
  errorExample,
  type Operation,
  openApiRouter,
  RECORDING_FIELD,
  RECORDING_FIELD_DOC,
} from '@convo/router';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { z } from 'zod';
import { REST_PREFIX } from './rest/handler.ts';

/*
 * The OpenAPI 3.1 document: generated from the procedures' zod schemas by trpc-to-openapi, then
 * completed from each operation's declaration (its .types.ts) where the generator cannot say the
 * truth: our error body for each status an operation really returns, its success status, an
 * optional body, both auth forms, headers and examples. One loop, nothing per operation here.
 * Then the webhooks an endpoint may subscribe to, each with its body.
 */

type Json = Record<string, any>;

const errorResponse = (description: string, codes: ErrorCode[]) => ({
  description,
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/Error' },
      examples: Object.fromEntries(codes.map((code) => [code, { value: { error: errorExample(code), code } }])),
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
  ETag: {
    description:
      "A strong tag of this answer: it changes when anything of the account's conversations changes, on every " +
      'server at once. Send it back in If-None-Match to be answered 304 while nothing has.',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this answer is the stored first answer to a repeated Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const ETAG = { $ref: '#/components/headers/ETag' };
const REVALIDATE = {
  description: '`private, no-cache`: a client may keep the answer and revalidate it with If-None-Match.',
  schema: { type: 'string', enum: ['private, no-cache'] },
};
const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'The ETag of an answer the client kept. While nothing of the account has changed since (no conversation ' +
    'created, no message added), the answer is 304 with no body, and it costs none of the rate limit.',
  schema: { type: 'string' },
  example: '"Xq1B5sQd0mH0l4w9cO8k2vYzRdA"',
};
const NOT_MODIFIED = {
  description:
    'Nothing has changed since the answer whose ETag was sent in If-None-Match: keep it. No body, no RateLimit-* ' +
    'headers (it is not counted).',
  headers: { ETag: ETAG, 'Cache-Control': REVALIDATE },
};

export function buildOpenApiDocument(operations: readonly Operation[], version: string): OpenAPIObject {
  const doc = generateOpenApiDocument(openApiRouter(operations), {
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
      'past the limit the answer is 429 with `Retry-After`. get_conversation and get_conversations answer with an',
      '`ETag` and `Cache-Control: private, no-cache`; sent back in `If-None-Match`, it gets 304 while nothing of the',
      'account has changed (not counted against the rate limit). Every other answer carries `Cache-Control: no-store`.',
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
  const paths = doc.paths as Record<string, Record<string, Json>>;

  // Each operation's declaration says what the generator cannot: statuses and their error bodies,
  // the success status, examples, headers and header parameters.
  for (const { meta, doc: declared, input, conditional, queryToo } of operations) {
    const op = paths[meta.openapi.path]?.[meta.openapi.method.toLowerCase()] as Json;
    op.security = security;
    op.description = declared.description;
    const success = op.responses['200'];
    success.content['application/json'].example = declared.example;
    if (declared.headers) success.headers = declared.headers;
    if (declared.parameters) op.parameters = declared.parameters;
    if (op.requestBody) {
      // No body at all is read as `{}`: a request too, when every member is optional.
      op.requestBody.required = !input.safeParse(undefined).success && !queryToo;
      // Each body member may come in the query instead: the same schemas, as parameters.
      if (queryToo) {
        const schema = op.requestBody.content['application/json'].schema as Json;
        op.parameters = [
          ...(op.parameters ?? []),
          ...Object.entries((schema.properties ?? {}) as Record<string, Json>).map(([name, member]) => ({
            name,
            in: 'query',
            required: false,
            description: `${member.description ?? name} (in the query, or as the body's member of that name, which wins)`,
            schema: member,
          })),
        ];
      }
      for (const [type, media] of Object.entries(op.requestBody.content as Record<string, Json>)) {
        const example = declared.requestExamples?.[type];
        if (example) media.examples = { titled: { value: example } };
      }
      // A multipart body carries the recording beside the members (which the generator cannot say).
      const multipart = op.requestBody.content['multipart/form-data'] as Json | undefined;
      if (multipart) {
        const schema = multipart.schema as Json;
        multipart.schema = {
          ...schema,
          properties: {
            ...schema.properties,
            [RECORDING_FIELD]: { type: 'string', format: 'binary', description: RECORDING_FIELD_DOC },
          },
        };
        multipart.encoding = { [RECORDING_FIELD]: { contentType: 'video/*, audio/*' } };
      }
    }
    const errors = Object.entries(declared.errors).map(([status, e]) => [
      status,
      errorResponse(e.description, e.codes),
    ]);
    if (conditional) {
      success.headers = { ...success.headers, ETag: ETAG, 'Cache-Control': REVALIDATE };
      op.parameters = [...(op.parameters ?? []), IF_NONE_MATCH];
    }
    op.responses = {
      [String(meta.successStatus ?? 200)]: success,
      ...(conditional ? { '304': NOT_MODIFIED } : {}),
      ...COMMON_ERRORS,
      ...Object.fromEntries(errors),
    };
    for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
      if (status !== '401' && status !== '304') response.headers = { ...RATE_LIMIT_HEADERS, ...response.headers };
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
  (doc as Json).webhooks = webhooks(schemas);
  doc.servers = [{ url: REST_PREFIX, description: 'This server' }];
  return doc;
}

/** The bodies of the events with a schema of their own; the others carry `data` as their description says. */
const EVENT_SCHEMAS: Partial<Record<WebhookEventType, z.ZodType>> = {
  message_played: ZMessagePlayedEvent,
  reaction_added: ZReactionAddedEvent,
  message_transcribed: ZMessageTranscribedEvent,
};

/**
 * The webhooks an endpoint may subscribe to (create_webhook's `events`), as OpenAPI 3.1 says them:
 * each a POST of its Standard Webhooks envelope, signed with the endpoint's secret. A schema that
 * names others (`MessageAuthor`) refers to them among `schemas`, adding those missing.
 */
function webhooks(schemas: Record<string, unknown>): Json {
  const signed =
    'Signed by the Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the ' +
    "endpoint's secret; retried with backoff until a 2xx answer. See `WebhookEventType` for every type's `data`.";
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => {
      const own = EVENT_SCHEMAS[type];
      let schema: Json = {
        type: 'object',
        required: ['type', 'timestamp', 'data'],
        properties: {
          type: { type: 'string', const: type },
          timestamp: { type: 'string', description: 'When it happened, ISO 8601, UTC.' },
          data: { type: 'object', description: `What \`${type}\` carries (see \`WebhookEventType\`).` },
        },
      };
      if (own) {
        const { $defs = {}, $ref } = JSON.parse(
          JSON.stringify(z.toJSONSchema(own)).replaceAll('"#/$defs/', '"#/components/schemas/'),
        ) as { $defs?: Record<string, unknown>; $ref?: string };
        for (const [name, def] of Object.entries($defs)) schemas[name] ??= def;
        schema = { $ref };
      }
      return [
        type,
        {
          post: {
            operationId: `${type}_webhook`,
            summary: type,
            description: signed,
            // No credential of ours: the receiver checks the signature instead.
            security: [],
            requestBody: { required: true, content: { 'application/json': { schema } } },
            responses: { '200': { description: 'Received: any 2xx answer ends the delivery.' } },
          },
        },
      ];
    }),
  );
}
