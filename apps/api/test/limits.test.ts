import { purgeIdempotencyKeys, setRateLimit } from '@convo/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auth,
  call,
  createJson,
  get,
  type Harness,
  makeAccount,
  newToken,
  openHarness,
  REST,
  secondApp,
  type TestAccount,
} from './support/harness.ts';

let h: Harness;
let a: TestAccount;
let b: TestAccount;
const LIMIT = 6;

beforeAll(async () => {
  h = await openHarness({ services: { rateLimit: { limit: LIMIT, windowSeconds: 3600 } } });
  a = await makeAccount(h, 'limited');
  b = await makeAccount(h, 'other');
});
afterAll(async () => h?.close());

const count = async (table: string, accountId: number): Promise<number> => {
  const rows = await h.db.orm.em
    .fork()
    .getConnection()
    .execute<{ n: number }[]>(`select count(*)::int as n from ${table} where account_id = ?`, [accountId]);
  return rows[0]?.n ?? -1;
};

describe('per-token rate limiting', () => {
  it('counts down on every response, then answers 429 with Retry-After and the error body', async () => {
    const { token } = await newToken(h, a.id);
    const remaining: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const r = i % 2 === 0 ? await get(h, token, 'get_conversations') : await createJson(h, token, {});
      expect([200, 201, 404]).toContain(r.status);
      expect(r.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      const reset = Number(r.headers.get('ratelimit-reset'));
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(3600);
      remaining.push(Number(r.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual([5, 4, 3, 2, 1, 0]);
    const before = await count('conversation', a.id);
    const refused = await createJson(h, token, { title: 'one too many' });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: expect.stringContaining('rate limit'), code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(await count('conversation', a.id)).toBe(before);
    // Another token, of this account or another, has its own quota.
    expect((await get(h, a.token, 'get_conversations')).status).toBe(200);
    expect((await get(h, b.token, 'get_conversation')).status).toBe(404);
  });

  it('holds across processes: two apps on one database share one quota', async () => {
    const { token } = await newToken(h, a.id);
    const other = secondApp(h, { rateLimit: { limit: LIMIT, windowSeconds: 3600 } });
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT * 2; i++) {
      const app = i % 2 === 0 ? h.app : other;
      const res = await app.fetch(new Request(`${REST}/get_conversations`, { headers: auth(token) }));
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(LIMIT);
  });

  it('spends exactly the limit under concurrency, never more', async () => {
    const { token } = await newToken(h, a.id);
    const other = secondApp(h, { rateLimit: { limit: LIMIT, windowSeconds: 3600 } });
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 === 0 ? h.app : other).fetch(new Request(`${REST}/get_conversation`, { headers: auth(token) })),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(LIMIT);
    expect(results.filter((r) => r.status === 429)).toHaveLength(30 - LIMIT);
  });

  it("takes the account's own limit when the operator sets one, and none when it is 0", async () => {
    const c = await makeAccount(h, 'custom');
    await setRateLimit(h.db.orm.em.fork(), 'custom', 2);
    const { token } = await newToken(h, c.id);
    const r = await get(h, token, 'get_conversation');
    expect(r.headers.get('ratelimit-limit')).toBe('2');
    await get(h, token, 'get_conversation');
    expect((await get(h, token, 'get_conversation')).status).toBe(429);

    await setRateLimit(h.db.orm.em.fork(), 'custom', 0);
    const free = await newToken(h, c.id);
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await get(h, free.token, 'get_conversation');
      expect(res.status).toBe(404);
      expect(res.headers.has('ratelimit-limit')).toBe(false);
    }
  });

  it('applies to tRPC calls as well', async () => {
    const { token } = await newToken(h, a.id);
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) {
      const res = await h.app.fetch(
        new Request('http://api.test/trpc/conversations.getConversations?input=%7B%7D', { headers: auth(token) }),
      );
      statuses.push(res.status);
      if (i === 0) expect(res.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 1));
    }
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('Idempotency-Key on create', () => {
  const create = (token: string, key: string | null, body: unknown) =>
    call(
      h,
      new Request(`${REST}/create_conversation`, {
        method: 'POST',
        headers: {
          ...auth(token),
          'content-type': 'application/json',
          ...(key === null ? {} : { 'idempotency-key': key }),
        },
        body: JSON.stringify(body),
      }),
    );
  let token: string;
  beforeAll(async () => {
    const c = await makeAccount(h, 'idem');
    await setRateLimit(h.db.orm.em.fork(), 'idem', 0);
    token = (await newToken(h, c.id)).token;
  });

  it('replays the first answer, status and body, and creates nothing more', async () => {
    const account = (await get(h, token, 'get_conversations')).status; // 404: nothing yet
    expect(account).toBe(404);
    const first = await create(token, 'order-1', { title: 'Order 1' });
    expect(first.status).toBe(201);
    expect(first.headers.has('idempotent-replayed')).toBe(false);
    const again = await create(token, 'order-1', { title: 'Order 1' });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const listed = await get(h, token, 'get_conversations');
    expect(listed.body.conversations).toHaveLength(1);
  });

  it('refuses the same key with a different body (422), changing nothing', async () => {
    await create(token, 'order-2', { title: 'Order 2' });
    const before = (await get(h, token, 'get_conversations')).body.conversations.length;
    const other = await create(token, 'order-2', { title: 'Something else' });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    expect((await get(h, token, 'get_conversations')).body.conversations.length).toBe(before);
  });

  it('lets only one of many concurrent requests with one key create; all get its answer', async () => {
    const results = await Promise.all(Array.from({ length: 16 }, () => create(token, 'burst', { slug: 'burst' })));
    expect(results.map((r) => r.status)).toEqual(Array(16).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(15);
    const found = await get(h, token, 'get_conversation?slug=burst');
    expect(found.body.id).toBe(results[0]?.body.id);
  });

  it('does not remember a refused create: its retry runs again', async () => {
    await create(token, null, { slug: 'taken' });
    expect((await create(token, 'retry-me', { slug: 'taken' })).status).toBe(409);
    expect((await create(token, 'retry-me', { slug: 'taken' })).status).toBe(409);
    expect((await create(token, 'retry-me', { slug: 'taken' })).body.code).toBe('slug_taken');
  });

  it('keeps keys per account: another account may use the same key', async () => {
    const mine = await create(token, 'shared-key', { title: 'Mine' });
    const theirs = await create(b.token, 'shared-key', { title: 'Mine' });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body.conversation_url).toMatch(/^https:\/\/other\.example\.com\//);
  });

  it('forgets a key after 24 hours', async () => {
    const first = await create(token, 'old-key', { title: 'Old' });
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`update idempotency_key set created_at = now() - interval '25 hours' where key = 'old-key'`);
    // The hourly purge takes exactly the expired key; younger ones stay.
    expect(await purgeIdempotencyKeys(h.db.orm.em.fork())).toBe(1);
    const later = await create(token, 'old-key', { title: 'Old' });
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
  });

  it('refuses an empty, over-long or non-ASCII key with 422', async () => {
    for (const key of ['', 'x'.repeat(256), 'caf\u00e9']) {
      const r = await call(
        h,
        new Request(`${REST}/create_conversation`, {
          method: 'POST',
          headers: { ...auth(token), 'content-type': 'application/json', 'idempotency-key': key },
          body: '{}',
        }),
      );
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('invalid_input');
    }
    expect((await create(token, 'x'.repeat(255), {})).status).toBe(201);
  });
});

describe('request timeout', () => {
  // A lock held by another session makes the request wait; only a PostgreSQL server has sessions.
  if (!process.env.DATABASE_URL) {
    console.warn(
      'limits.test.ts: the request-timeout test is skipped: it needs a PostgreSQL server (DATABASE_URL) for a second session to hold the lock; embedded PGlite has one session',
    );
  }
  it.runIf(process.env.DATABASE_URL)('answers 503 when a request runs past REQUEST_TIMEOUT_MS', async () => {
    const slow = await openHarness({ app: { http: { requestTimeoutMs: 300 } } });
    try {
      const c = await makeAccount(slow, 'slow');
      expect((await createJson(slow, c.token, { slug: 'before' })).status).toBe(201);
      const holder = slow.db.orm.em.fork();
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const locking = holder.transactional(async (tx) => {
        await tx
          .getConnection()
          .execute('lock table conversation in access exclusive mode', [], 'all', tx.getTransactionContext());
        await held;
      });
      await new Promise((r) => setTimeout(r, 100));
      const started = performance.now();
      const r = await get(slow, c.token, 'get_conversation?slug=before');
      const ms = performance.now() - started;
      release();
      await locking;
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ error: expect.any(String), code: 'timeout' });
      expect(r.headers.get('retry-after')).toBe('1');
      expect(ms).toBeLessThan(1_500);
      // The lock gone, the same request succeeds.
      expect((await get(slow, c.token, 'get_conversation?slug=before')).status).toBe(200);
    } finally {
      await slow.close();
    }
  });
});
