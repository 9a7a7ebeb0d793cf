import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Outcome, request, sleep, startLoad } from './support/load.ts';
import { startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { createAccount, type ServerProcess, startServer } from './support/server.ts';

/*
 * PostgreSQL stopped (fast shutdown) under load, then started again. The server must not crash;
 * requests during the outage must fail fast with 503 and the error body; within 5 s of the
 * database's return requests must succeed; and every create that was acknowledged must be stored.
 */

let db: ThrowawayPostgres;
let server: ServerProcess;
let token: string;

beforeAll(async () => {
  db = await startThrowawayPostgres();
  token = createAccount(db.url, 'outage').token;
  server = await startServer(db.url, { RATE_LIMIT: '600000' });
});
afterAll(async () => {
  await server?.kill();
  db?.destroy();
});

const OUTAGE_MS = 4_000;

it('survives a database outage: fast 503s, recovery within 5 s, no acknowledged create lost', async () => {
  const api = `${server.baseUrl}/api/v1/conversations`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const load = startLoad(16, (w, n) =>
    n % 2 === 0
      ? request('create', `${api}/create_conversation`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ title: `worker ${w} #${n}` }),
        })
      : request('read', `${api}/get_conversation?title=${encodeURIComponent(`worker ${w} #${n - 1}`)}`, { headers }),
  );
  await sleep(2_000);
  db.stop();
  const down = performance.now();
  await sleep(OUTAGE_MS);
  db.start();
  const up = performance.now();
  await sleep(7_000);
  await load.stop();

  const all = load.outcomes;
  const during = all.filter((o) => o.started >= down && o.started + o.ms <= up);
  const after = all.filter((o) => o.started >= up);
  const firstOk = after.filter((o) => o.status < 300).sort((x, y) => x.started + x.ms - (y.started + y.ms))[0];
  const recoveryMs = firstOk ? firstOk.started + firstOk.ms - up : Number.POSITIVE_INFINITY;
  const acknowledged = all.filter((o) => o.kind === 'create' && o.status === 201).map((o) => o.body.id as number);

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const stored = await client.query<{ n: number }>('select count(*)::int as n from conversation where id = any($1)', [
    acknowledged,
  ]);
  await client.end();
  const lost = acknowledged.length - (stored.rows[0]?.n ?? 0);

  const statuses = (list: Outcome[]) => {
    const by: Record<string, number> = {};
    for (const o of list) by[o.status || o.error || 'none'] = (by[o.status || o.error || 'none'] ?? 0) + 1;
    return JSON.stringify(by);
  };
  console.log(
    [
      `outage: ${all.length} requests in all ${statuses(all)}`,
      `  during the ${OUTAGE_MS} ms outage: ${during.length} requests ${statuses(during)}, slowest ${Math.round(Math.max(0, ...during.map((o) => o.ms)))} ms`,
      `  recovery: first success ${Math.round(recoveryMs)} ms after the database was back`,
      `  creates acknowledged: ${acknowledged.length}, lost: ${lost}`,
    ].join('\n'),
  );

  expect(server.child.exitCode, server.output()).toBeNull();
  expect(during.length).toBeGreaterThan(0);
  for (const o of during) {
    expect(o.status, JSON.stringify(o)).toBe(503);
    expect(o.body).toEqual({ error: expect.any(String), code: expect.stringMatching(/^(unavailable|timeout)$/) });
    expect(o.ms).toBeLessThan(5_000);
  }
  // Nothing but successes, or 503 around the outage: never a 500, never a dropped connection.
  expect(
    all.every((o) => o.status === 200 || o.status === 201 || o.status === 503),
    statuses(all),
  ).toBe(true);
  expect(recoveryMs).toBeLessThan(5_000);
  const settled = after.filter((o) => o.started >= up + 5_000);
  expect(settled.length).toBeGreaterThan(0);
  expect(
    settled.every((o) => o.status < 300),
    statuses(settled),
  ).toBe(true);
  expect(lost).toBe(0);
});
