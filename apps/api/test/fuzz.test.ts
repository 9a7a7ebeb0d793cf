import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, createJson, type Harness, makeAccount, openHarness, REST, type TestAccount } from './support/harness.ts';

/*
 * Property-based fuzzing of the HTTP handler: whatever a client sends, the answer is never a 5xx,
 * it is always the {"error"} body with a documented status when refused, and a refused request
 * changes nothing. FUZZ_RUNS sets the number of cases (10,000 under CI); a failure prints its seed.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? (process.env.CI ? 10_000 : 1_000));
const DOCUMENTED = new Set([200, 201, 400, 401, 404, 405, 409, 413, 415, 422]);

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await openHarness();
  acme = await makeAccount(h, 'acme');
  expect((await createJson(h, acme.token, { title: 'Existing', slug: 'existing' })).status).toBe(201);
});
afterAll(async () => h?.close());

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'null',
    'true',
    'false',
    '0',
    '-1',
    '1e309',
    'NaN',
    "' or 1=1 --",
    '%',
    '_',
    '%_%',
    '\\',
    '__proto__',
    'constructor',
    'x'.repeat(300),
    'ü',
    '😀',
    '\u202e',
    'existing',
    'EXISTING',
    '<script>',
  ),
);
const jsonValue = fc.oneof(
  nasty,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(nasty, { maxLength: 3 }),
  fc.dictionary(nasty, nasty, { maxKeys: 3 }),
);
const fieldName = fc.oneof(
  fc.constantFrom(
    'title',
    'slug',
    'anyone_can_post',
    'allow_anonymous_messages',
    'allow_search_engines',
    'primary_intake_page',
    'intake_page_id',
    'id',
    'public',
    '__proto__',
    'constructor',
    'page',
  ),
  fc.string({ maxLength: 12 }),
);
const body = fc.oneof(
  fc.dictionary(fieldName, jsonValue, { maxKeys: 6 }).map((o) => JSON.stringify(o)),
  jsonValue.map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 80 }),
  fc.constantFrom('{', '{"title":', '[]', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}'),
  // Many-field forms: the shape that once cost quadratic time.
  fc
    .tuple(fc.integer({ min: 1, max: 3_000 }), fc.constantFrom('a', 'title=x', 'f', '__proto__=1', 'constructor'))
    .map(([n, field]) => Array.from({ length: n }, (_, i) => (i % 3 === 0 ? field : `f${i}`)).join('&')),
);
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data',
  '',
  'application/vnd.api+json',
  'APPLICATION/JSON',
);
const query = fc
  .array(fc.tuple(fieldName, nasty), { maxLength: 4 })
  .map((pairs) => new URLSearchParams(pairs).toString());
const authorization = fc.oneof(
  fc.constant('valid'),
  fc.constantFrom('', 'Bearer', 'Bearer ', 'Basic abc', 'cnv_', 'Bearer cnv_nope'),
  fc.string({ maxLength: 40 }).filter((s) => /^[\x21-\x7e ]*$/.test(s)),
);
/** Idempotency-Key: absent, a few reused ones (replays and mismatches), or any header-safe text. */
const idempotencyKey = fc.option(
  fc.oneof(
    fc.constantFrom('k1', 'k2', 'x'.repeat(255), 'x'.repeat(256)),
    fc
      .string({ maxLength: 300 })
      .filter((s) => /^[\x21-\x7e\xa0-\xff]([\x20-\x7e\xa0-\xff]*[\x21-\x7e\xa0-\xff])?$/.test(s)),
  ),
  { nil: undefined },
);
const path = fc.constantFrom(
  '/conversations/create_conversation',
  '/conversations/get_conversation',
  '/conversations/get_conversations',
  '/conversations/nope',
  '/conversations/get_conversation/',
  '/conversations',
  '/openapi.json',
  '/docs',
  '/docs/constructor',
  '/docs/__proto__',
  '/constructor',
  '/conversations/__proto__',
  '/conversations/toString',
  '/webhooks',
  '/webhooks/1',
  '/webhooks/abc',
  '/webhooks/%ZZ',
  '/webhooks/1/2',
  '/webhooks/',
  '/webhooks/__proto__',
  '/webhooks/-1',
);

describe('fuzzing the HTTP handler', () => {
  it(`never answers 5xx, always with a documented status and the error body (${RUNS} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
          path,
          query,
          body,
          contentType,
          authorization,
          idempotencyKey,
          repeatKey: fc.boolean(),
        }),
        async (c) => {
          const headers = new Headers();
          if (c.contentType) headers.set('content-type', c.contentType);
          if (c.idempotencyKey !== undefined) {
            headers.set('idempotency-key', c.idempotencyKey);
            // A repeated header reaches the app joined with a comma, as HTTP has it.
            if (c.repeatKey) headers.append('idempotency-key', 'another');
          }
          if (c.authorization)
            headers.set('authorization', c.authorization === 'valid' ? `Bearer ${acme.token}` : c.authorization);
          const hasBody = c.method !== 'GET';
          const res = await h.app.fetch(
            new Request(`${BASE}/api/v1${c.path}${c.query ? `?${c.query}` : ''}`, {
              method: c.method,
              headers,
              ...(hasBody ? { body: c.body } : {}),
            }),
          );
          const text = await res.text();
          expect(res.status).toBeLessThan(500);
          expect(DOCUMENTED.has(res.status)).toBe(true);
          if (res.status >= 400) {
            const parsed = JSON.parse(text);
            expect(typeof parsed.error).toBe('string');
            expect(text).not.toMatch(/at .*\.(ts|js):\d+|stack|select |insert /i);
          }
        },
      ),
      { numRuns: RUNS, verbose: 1 },
    );
  }, 600_000);

  it(`answers tRPC in tRPC's shape, never 5xx: batches, odd names, large and chunked bodies (${Math.ceil(RUNS / 5)} cases)`, async () => {
    const procedure = fc.constantFrom(
      'conversations.createConversation',
      'conversations.getConversation',
      'conversations.getConversations',
      'webhooks.createWebhook',
      'webhooks.listWebhooks',
      'webhooks.deleteWebhook',
      'conversations.nope',
      'constructor',
      '__proto__',
      'toString',
      'conversations.__proto__',
      '',
    );
    const largeBody = fc
      .tuple(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom('x', '{', '"', ' '))
      .map(([n, c]) => c.repeat(n));
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom('GET', 'POST', 'PUT', 'HEAD'),
          calls: fc.array(procedure, { minLength: 1, maxLength: 14 }),
          batch: fc.boolean(),
          input: fc.option(
            fc.oneof(
              body,
              jsonValue.map((v) => JSON.stringify(v)),
            ),
            { nil: undefined },
          ),
          payload: fc.oneof(body, largeBody),
          chunked: fc.boolean(),
          authorization,
        }),
        async (c) => {
          const headers = new Headers({ 'content-type': 'application/json' });
          if (c.authorization)
            headers.set('authorization', c.authorization === 'valid' ? `Bearer ${acme.token}` : c.authorization);
          const query = new URLSearchParams();
          if (c.batch) query.set('batch', '1');
          if (c.input !== undefined) query.set('input', c.input);
          const hasBody = c.method === 'POST' || c.method === 'PUT';
          const bytes = new TextEncoder().encode(c.payload);
          const stream = new ReadableStream<Uint8Array>({
            start(controller) {
              for (let at = 0; at < bytes.length; at += 8192) controller.enqueue(bytes.slice(at, at + 8192));
              controller.close();
            },
          });
          const res = await h.app.fetch(
            new Request(`${BASE}/trpc/${c.calls.join(',')}?${query}`, {
              method: c.method,
              headers,
              ...(hasBody ? { body: c.chunked ? stream : bytes, duplex: 'half' } : {}),
            } as RequestInit),
          );
          const text = await res.text();
          expect(res.status).toBeLessThan(500);
          // HEAD is answered as GET without the body, on every route.
          if (c.method === 'HEAD') expect(text).toBe('');
          else if (res.status >= 400) {
            const parsed = JSON.parse(text);
            const errors = (Array.isArray(parsed) ? parsed : [parsed]).filter((r) => r.error);
            expect(errors.length).toBeGreaterThan(0);
            for (const r of errors) {
              expect(typeof r.error.message).toBe('string');
              expect(typeof r.error.data.appCode).toBe('string');
            }
            expect(text).not.toMatch(/at .*\.(ts|js):\d+|stack|select |insert |Unexpected token/i);
          }
        },
      ),
      { numRuns: Math.ceil(RUNS / 5) },
    );
  }, 600_000);

  it('changes nothing with a refused create: the rows grow by exactly the accepted ones', async () => {
    const count = async () => {
      const rows = (await h.db.orm.em
        .fork()
        .getConnection()
        .execute('select (select count(*) from conversation) + (select count(*) from conversation_member) as n')) as {
        n: string | number;
      }[];
      return Number(rows[0]?.n);
    };
    const before = await count();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(body, contentType, idempotencyKey, async (payload, type, key) => {
        const res = await h.app.fetch(
          new Request(`${REST}/create_conversation`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${acme.token}`,
              ...(type ? { 'content-type': type } : {}),
              ...(key === undefined ? {} : { 'idempotency-key': key }),
            },
            body: payload,
          }),
        );
        await res.text();
        expect(res.status).toBeLessThan(500);
        // A replayed answer created nothing.
        if (res.status === 201 && !res.headers.has('idempotent-replayed')) accepted += 1;
      }),
      { numRuns: Math.ceil(RUNS / 10) },
    );
    // Each accepted create adds a conversation and its owner as member; refused and replayed ones add nothing.
    expect(await count()).toBe(before + 2 * accepted);
  }, 600_000);
});
