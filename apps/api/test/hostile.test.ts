import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auth,
  BASE,
  call,
  createJson,
  get,
  type Harness,
  MAX_BODY_BYTES,
  METRICS_TOKEN,
  makeAccount,
  newToken,
  openHarness,
  REST,
  secondApp,
  type TestAccount,
} from './support/harness.ts';

/*
 * What a hostile client tried, in process (the socket-level shapes are in hostile-node.test.ts):
 * bodies that cost more than they should, bodies that never end, batches, prototype-named paths,
 * repeated headers, and the error shapes each transport promises.
 */

let h: Harness;
let acme: TestAccount;
const BODY_TIMEOUT_MS = 300;

beforeAll(async () => {
  h = await openHarness({ app: { http: { body: { timeoutMs: BODY_TIMEOUT_MS }, maxBatch: 10 } } });
  acme = await makeAccount(h, 'acme');
  expect((await createJson(h, acme.token, { title: 'Existing', slug: 'existing' })).status).toBe(201);
});
afterAll(async () => h?.close());

const conversations = async (): Promise<number> => {
  const rows = await h.db.orm.em
    .fork()
    .getConnection()
    .execute<{ n: number }[]>('select count(*)::int as n from conversation');
  return rows[0]?.n ?? -1;
};

/** A body that says how much of it was read, and can be made to stall or break. */
function watchedBody(chunks: Uint8Array[], end: 'close' | 'stall' | 'error' = 'close') {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = chunks[pulled];
        if (next) {
          pulled++;
          controller.enqueue(next);
        } else if (end === 'close') controller.close();
        else if (end === 'error') controller.error(new Error('read ECONNRESET'));
        // 'stall': never enqueue again, never close
      },
    },
    { highWaterMark: 0 },
  ); // nothing is pulled until someone reads
  return { stream, pulled: () => pulled };
}

const post = (url: string, body: RequestInit['body'], headers: Record<string, string>) =>
  new Request(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);

/** 16,000 one-letter fields in 32 KB: the body that froze the old parser for 1.4-1.9 s. */
const manyFields = Array.from({ length: 16_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('&');

describe('a form of 16,000 fields', () => {
  it('without a token is refused (401) before a byte of it is read', async () => {
    const body = watchedBody([new TextEncoder().encode(manyFields)]);
    const started = performance.now();
    const r = await call(
      h,
      post(`${REST}/create_conversation`, body.stream, { 'content-type': 'application/x-www-form-urlencoded' }),
    );
    expect(performance.now() - started).toBeLessThan(50);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthorized');
    expect(body.pulled()).toBe(0);
  });

  it('with a token is refused (413, the field cap) at once, and creates nothing', async () => {
    const before = await conversations();
    const started = performance.now();
    const r = await call(
      h,
      post(`${REST}/create_conversation`, manyFields, {
        ...auth(acme.token),
        'content-type': 'application/x-www-form-urlencoded',
      }),
    );
    expect(performance.now() - started).toBeLessThan(50);
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: 'a form body is limited to 100 fields', code: 'body_too_large' });
    expect(await conversations()).toBe(before);
  });

  it('a form of 100 fields is still read, in linear time (a repeated field is refused as before)', async () => {
    const fields = Array.from({ length: 99 }, (_, i) => `f${i}=x`).concat('title=Many%20fields');
    const r = await call(
      h,
      post(`${REST}/create_conversation`, fields.join('&'), {
        ...auth(acme.token),
        'content-type': 'application/x-www-form-urlencoded',
      }),
    );
    expect(r.status).toBe(201);
    expect(r.body.title).toBe('Many fields');
    const repeated = await call(
      h,
      post(`${REST}/create_conversation`, 'title=a&title=b', {
        ...auth(acme.token),
        'content-type': 'application/x-www-form-urlencoded',
      }),
    );
    expect(repeated.status).toBe(422);
  });
});

describe('tRPC bodies are bounded like every other', () => {
  const trpcCreate = (body: RequestInit['body'], headers: Record<string, string> = {}) =>
    call(
      h,
      post(`${BASE}/trpc/conversations.createConversation`, body, {
        ...auth(acme.token),
        'content-type': 'application/json',
        ...headers,
      }),
    );

  it('refuses a declared Content-Length over the limit without reading the body', async () => {
    const body = watchedBody([new Uint8Array(1024)]);
    const r = await trpcCreate(body.stream, { 'content-length': String(MAX_BODY_BYTES + 1) });
    expect(r.status).toBe(413);
    expect(r.body.error.data).toMatchObject({ appCode: 'body_too_large', httpStatus: 413 });
    expect(body.pulled()).toBe(0);
  });

  it('cuts a chunked body off at the limit and never reads the rest', async () => {
    const chunk = new Uint8Array(16 * 1024).fill(32);
    const body = watchedBody(Array.from({ length: 1000 }, () => chunk));
    const before = await conversations();
    const r = await trpcCreate(body.stream);
    expect(r.status).toBe(413);
    expect(r.body.error.data.appCode).toBe('body_too_large');
    expect(body.pulled()).toBeLessThanOrEqual(MAX_BODY_BYTES / chunk.byteLength + 2);
    expect(await conversations()).toBe(before);
  });

  it('takes a body within the limit', async () => {
    const r = await trpcCreate(JSON.stringify({ title: 'Via tRPC', slug: 'via-trpc' }));
    expect(r.status).toBe(200);
    expect(r.body.result.data.slug).toBe('via-trpc');
  });

  it('refuses a body without a token before reading it', async () => {
    const body = watchedBody([new TextEncoder().encode('{}')]);
    const r = await call(
      h,
      post(`${BASE}/trpc/conversations.createConversation`, body.stream, { 'content-type': 'application/json' }),
    );
    expect(r.status).toBe(401);
    expect(r.body.error.data.appCode).toBe('unauthorized');
    expect(body.pulled()).toBe(0);
  });
});

describe('bodies that stop or break', () => {
  it('a body that stops arriving is a 408 after the body timeout, closing the connection, never a 503', async () => {
    const before = await conversations();
    const body = watchedBody([new TextEncoder().encode('{"title":')], 'stall');
    const started = performance.now();
    const r = await call(
      h,
      post(`${REST}/create_conversation`, body.stream, { ...auth(acme.token), 'content-type': 'application/json' }),
    );
    const took = performance.now() - started;
    expect(r.status).toBe(408);
    expect(r.body.code).toBe('request_timeout');
    expect(r.headers.get('connection')).toBe('close');
    expect(took).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 5);
    expect(took).toBeLessThan(BODY_TIMEOUT_MS + 1000);
    expect(await conversations()).toBe(before);
  });

  it('an upload the client drops is counted as 499, not as a database outage', async () => {
    const body = watchedBody([new TextEncoder().encode('{"title":')], 'error');
    const r = await call(
      h,
      post(`${REST}/create_conversation`, body.stream, { ...auth(acme.token), 'content-type': 'application/json' }),
    );
    expect(r.status).toBe(499);
    const metrics = await (
      await h.app.fetch(new Request(`${BASE}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }))
    ).text();
    expect(metrics).toMatch(/http_requests_total\{operation="create_conversation",method="POST",status="499"\} 1/);
    expect(metrics).not.toMatch(/status="503"/);
  });

  it('a client that goes away before its answer is counted as 499', async () => {
    const gone = new AbortController();
    gone.abort();
    const res = await h.app.fetch(
      new Request(`${REST}/get_conversation`, { headers: auth(acme.token), signal: gone.signal }),
    );
    await res.text();
    const metrics = await (
      await h.app.fetch(new Request(`${BASE}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }))
    ).text();
    expect(metrics).toMatch(/http_requests_total\{operation="get_conversation",method="GET",status="499"\} 1/);
  });
});

describe('tRPC batches', () => {
  const batch = (token: string | null, n: number) =>
    call(
      h,
      new Request(
        `${BASE}/trpc/${Array.from({ length: n }, () => 'conversations.getConversations').join(',')}?batch=1&input=${encodeURIComponent(
          JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, {}]))),
        )}`,
        { headers: token ? auth(token) : {} },
      ),
    );

  it('refuses more than the cap with one tRPC error, before any lookup', async () => {
    h.statements.length = 0;
    const r = await batch(acme.token, 11);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      message: 'a batch may carry at most 10 calls',
      data: { appCode: 'batch_too_large', httpStatus: 400 },
    });
    expect(h.statements).toHaveLength(0);
    const unauthenticated = await batch(null, 850);
    expect(unauthenticated.status).toBe(400);
  });

  it('authenticates once per request, whatever the batch carries', async () => {
    h.statements.length = 0;
    const r = await batch(acme.token, 10);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(10);
    expect(h.statements.filter((s) => /from "?api_token"?/.test(s))).toHaveLength(1);
    h.statements.length = 0;
    const refused = await batch('cnv_unknown', 10);
    expect(refused.status).toBe(401);
    expect(h.statements.filter((s) => /from "?api_token"?/.test(s))).toHaveLength(1);
  });

  it('counts every call of a batch against the rate limit', async () => {
    const limited = secondApp(h, { rateLimit: { limit: 6, windowSeconds: 3600 } }, { http: { maxBatch: 10 } });
    const { token } = await newToken(h, acme.id);
    const url = `${BASE}/trpc/${Array(4).fill('conversations.getConversations').join(',')}?batch=1&input=${encodeURIComponent('{"0":{},"1":{},"2":{},"3":{}}')}`;
    const first = await limited.fetch(new Request(url, { headers: auth(token) }));
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-remaining')).toBe('2');
    const second = await limited.fetch(new Request(url, { headers: auth(token) }));
    const results = (await second.json()) as { error?: { data: { appCode: string } } }[];
    expect(results.filter((c) => c.error?.data.appCode === 'rate_limited')).toHaveLength(2);
  });
});

describe('paths that name Object.prototype', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'GET /api/v1/docs/%s is a 404 with the error body',
    async (name) => {
      const r = await call(h, new Request(`${BASE}/api/v1/docs/${name}`));
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'no such endpoint', code: 'route_not_found' });
    },
  );

  it('and so are REST and tRPC paths with those names', async () => {
    for (const name of ['constructor', '__proto__', 'toString']) {
      expect((await get(h, acme.token, name)).status).toBe(404);
      const t = await call(h, new Request(`${BASE}/trpc/${name}`, { headers: auth(acme.token) }));
      expect(t.status).toBe(404);
      expect(t.body.error.data.appCode).toBe('route_not_found');
    }
  });
});

describe('a repeated Idempotency-Key header', () => {
  it('is refused (422) and creates nothing', async () => {
    const headers = new Headers({ ...auth(acme.token), 'content-type': 'application/json' });
    headers.append('idempotency-key', 'first');
    headers.append('idempotency-key', 'second');
    const before = await conversations();
    const r = await call(
      h,
      new Request(`${REST}/create_conversation`, { method: 'POST', headers, body: JSON.stringify({ title: 'Twice' }) }),
    );
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ error: 'give one Idempotency-Key header, without commas', code: 'invalid_input' });
    expect(await conversations()).toBe(before);
  });
});

describe('/metrics', () => {
  it('asks for the bearer token the operator set', async () => {
    for (const authorization of [null, 'Bearer wrong-token-of-some-length', `Basic ${METRICS_TOKEN}`, METRICS_TOKEN]) {
      const r = await call(h, new Request(`${BASE}/metrics`, { headers: authorization ? { authorization } : {} }));
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('unauthorized');
      expect(JSON.stringify(r.body)).not.toMatch(/nodejs_version/);
    }
  });

  it('is not served at all when no token is set', async () => {
    const open = secondApp(h, {}, { http: { metricsToken: undefined } });
    const r = await open.fetch(new Request(`${BASE}/metrics`));
    expect(r.status).toBe(404);
  });
});

describe('one contract per transport', () => {
  it('an unknown tRPC procedure is route_not_found, not conversation_not_found', async () => {
    const r = await call(h, new Request(`${BASE}/trpc/conversations.nope?input=%7B%7D`, { headers: auth(acme.token) }));
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ message: 'no such endpoint', data: { appCode: 'route_not_found' } });
  });

  it('a tRPC body that is not JSON does not echo the parser', async () => {
    const r = await call(
      h,
      post(`${BASE}/trpc/conversations.createConversation`, '{"title": nope', {
        ...auth(acme.token),
        'content-type': 'application/json',
      }),
    );
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe('the request body is not valid JSON or form data');
    expect(JSON.stringify(r.body)).not.toMatch(/Unexpected|position|token/i);
  });

  it('a tRPC call past the request timeout answers in tRPC shape', async () => {
    const slow = secondApp(h, {}, { http: { requestTimeoutMs: 100 } });
    const locker = h.db.orm.em.fork();
    await locker.begin();
    try {
      await locker
        .getConnection()
        .execute('lock table conversation in access exclusive mode', [], 'all', locker.getTransactionContext());
      const res = await slow.fetch(
        new Request(`${BASE}/trpc/conversations.getConversation?input=%7B%7D`, { headers: auth(acme.token) }),
      );
      const body = (await res.json()) as { error: { data: { appCode: string; httpStatus: number } } };
      expect(res.status).toBe(503);
      expect(body.error.data).toMatchObject({ appCode: 'timeout', httpStatus: 503 });
    } finally {
      await locker.rollback();
    }
  });

  it.each(['/api/v1/openapi.json', '/api/v1/docs', '/healthz', '/readyz', '/metrics'])(
    '%s answers GET and HEAD, and 405 with Allow to anything else',
    async (path) => {
      const headers = { authorization: `Bearer ${METRICS_TOKEN}` };
      const got = await h.app.fetch(new Request(`${BASE}${path}`, { headers }));
      expect(got.status).toBe(200);
      await got.text();
      const head = await h.app.fetch(new Request(`${BASE}${path}`, { method: 'HEAD', headers }));
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const r = await call(h, new Request(`${BASE}${path}`, { method, headers }));
        expect(r.status).toBe(405);
        expect(r.headers.get('allow')).toBe('GET, HEAD');
        expect(r.body.code).toBe('method_not_allowed');
      }
    },
  );
});
