import { Agent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Outcome, request, sleep, startLoad } from './support/load.ts';
import { startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { createAccount, type ServerProcess, startServer } from './support/server.ts';

/*
 * SIGTERM under load: the server stops accepting, finishes what it accepted, closes its pool and
 * exits within 10 s. A request may be refused (the listener is closed), but no accepted request
 * may lose its connection.
 *
 * The clients hold one connection each (a pool of exactly 32 for 32 workers): a pool that opens a
 * spare connection now and then could have one waiting in the kernel's accept queue at the instant
 * the listener closes, and the kernel resets those. No server can answer a connection it never
 * accepted; in production the balancer stops sending first (readiness fails, then SIGTERM).
 */

let db: ThrowawayPostgres;
let server: ServerProcess;
let token: string;

beforeAll(async () => {
  db = await startThrowawayPostgres();
  token = createAccount(db.url, 'sigterm').token;
  server = await startServer(db.url);
});
afterAll(async () => {
  await server?.kill('SIGKILL');
  db?.destroy();
});

it('drains on SIGTERM: in-flight requests finish, nothing accepted breaks, exit within 10 s', async () => {
  const api = `${server.baseUrl}/api/v1/conversations`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const pool = new Agent({ connections: 32 });
  const load = startLoad(32, (w, n) =>
    n % 3 === 0
      ? request(
          'create',
          `${api}/create_conversation`,
          {
            method: 'POST',
            headers,
            body: JSON.stringify({ title: `w${w} n${n}` }),
          },
          pool,
        )
      : request('read', `${api}/get_conversations?page=${1 + (n % 3)}`, { headers }, pool),
  );
  await sleep(1_500);
  const signalled = performance.now();
  server.child.kill('SIGTERM');
  const { code } = await server.exited();
  const exitMs = performance.now() - signalled;
  await sleep(300);
  await load.stop();
  await pool.close();

  const all = load.outcomes;
  const inFlight = all.filter((o) => o.started < signalled && o.started + o.ms > signalled);
  const answered = all.filter((o) => o.status !== 0);
  const refused = all.filter((o) => o.error === 'ECONNREFUSED');
  const broken = all.filter((o) => o.status === 0 && o.error !== 'ECONNREFUSED');
  const by = (list: Outcome[]) => {
    const counts: Record<string, number> = {};
    for (const o of list) counts[o.status || String(o.error)] = (counts[o.status || String(o.error)] ?? 0) + 1;
    return JSON.stringify(counts);
  };
  console.log(
    [
      `sigterm: exit code ${code} after ${Math.round(exitMs)} ms`,
      `  ${all.length} requests: ${answered.length} answered, ${refused.length} refused after the listener closed, ${broken.length} broken`,
      `  in flight at the signal: ${inFlight.length}, answered ${by(inFlight)}`,
    ].join('\n'),
  );

  expect(code, server.output()).toBe(0);
  expect(exitMs).toBeLessThan(10_000);
  expect(inFlight.length).toBeGreaterThan(0);
  expect(
    inFlight.every((o) => o.status === 200 || o.status === 201 || o.status === 404),
    by(inFlight),
  ).toBe(true);
  const late = (o: Outcome) => ({ ...o, started: Math.round(o.started - signalled), ms: Math.round(o.ms) });
  expect(broken.map(late)).toEqual([]);
  expect(
    answered.every((o) => o.status < 500),
    by(answered),
  ).toBe(true);
});
