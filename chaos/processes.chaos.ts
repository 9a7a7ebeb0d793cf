import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awayFromWindowEnd } from '../apps/api/test/support/windows.ts';
import { request } from './support/load.ts';
import { startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { cli, createAccount, type ServerProcess, startServer } from './support/server.ts';

/*
 * Four server processes on one database, hit at once. Uniqueness, idempotency and rate limits
 * live in PostgreSQL, so they must hold across processes exactly as within one.
 */

let db: ThrowawayPostgres;
let servers: ServerProcess[];
let account: { id: number; token: string };

beforeAll(async () => {
  db = await startThrowawayPostgres();
  account = createAccount(db.url, 'many');
  servers = await Promise.all(Array.from({ length: 4 }, () => startServer(db.url, { RATE_LIMIT: '0' })));
});
afterAll(async () => {
  await Promise.all((servers ?? []).map((s) => s.kill()));
  db?.destroy();
});

const sql = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> => {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
};

const create = (i: number, token: string, body: unknown, extra: Record<string, string> = {}) =>
  request('create', `${servers[i % servers.length]?.baseUrl}/api/v1/conversations/create_conversation`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra },
    body: JSON.stringify(body),
  });

/** The slug with its letters' case flipped at random: the same slug, ignoring case. */
const mixCase = (slug: string) => [...slug].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c)).join('');

it('500 concurrent creates over 50 slugs: exactly one per slug, every other 409, no 5xx', async () => {
  const results = await Promise.all(
    Array.from({ length: 500 }, (_, i) => create(i, account.token, { slug: mixCase(`shared-slug-${i % 50}`) })),
  );
  const by: Record<number, number> = {};
  for (const r of results) by[r.status] = (by[r.status] ?? 0) + 1;
  const rows = await sql<{ slug: string; n: number }>(
    'select lower(slug) as slug, count(*)::int as n from conversation where account_id = $1 group by 1',
    [account.id],
  );
  console.log(`4 processes, 500 creates over 50 slugs: ${JSON.stringify(by)}; ${rows.length} slugs stored`);
  expect(by).toEqual({ 201: 50, 409: 450 });
  expect(rows).toHaveLength(50);
  expect(rows.every((r) => r.n === 1)).toBe(true);
  for (const r of results.filter((r) => r.status === 409)) expect(r.body.code).toBe('slug_taken');
});

it('one Idempotency-Key sent to all four processes at once creates one conversation', async () => {
  const results = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      create(i, account.token, { title: 'Once' }, { 'idempotency-key': 'once-only' }),
    ),
  );
  const ids = new Set(results.map((r) => r.body.id));
  const rows = await sql<{ n: number }>("select count(*)::int as n from conversation where title = 'Once'");
  console.log(
    `4 processes, 100 creates with one key: statuses ${[...new Set(results.map((r) => r.status))]}, ${rows[0]?.n} stored`,
  );
  expect(results.every((r) => r.status === 201)).toBe(true);
  expect(ids.size).toBe(1);
  expect(rows[0]?.n).toBe(1);
});

it("a token's rate limit holds across the four processes", async () => {
  cli(db.url, ['account', 'rate-limit', '--key', 'many', '--limit', '40']);
  const { token } = cli(db.url, ['token', 'create', '--account', 'many']);
  // The 200 requests must fall in one window: straddling two, they would be served 80.
  await awayFromWindowEnd();
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      request('read', `${servers[i % 4]?.baseUrl}/api/v1/conversations/get_conversation`, {
        headers: { authorization: `Bearer ${token}` },
      }),
    ),
  );
  const ok = results.filter((r) => r.status === 200).length;
  const limited = results.filter((r) => r.status === 429).length;
  console.log(`4 processes, limit 40, 200 requests: ${ok} served, ${limited} refused with 429`);
  expect(ok).toBe(40);
  expect(limited).toBe(160);
});
