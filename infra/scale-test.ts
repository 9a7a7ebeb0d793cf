/*
 * npm run scale-test — 1, 2 and 4 server processes against one PostgreSQL (a throwaway server of
 * its own), behind Debian's nginx as a round-robin load balancer, driven with mixed load by
 * autocannon. Prints throughput per replica count, then checks what replicas must share: data
 * (create on one, read on another), idempotency keys, rate limits, and that killing one replica
 * mid-load costs only the requests it had in flight.
 *
 * Options: --duration S (per replica count, default 10), --connections N (default 64).
 */
import { request as httpRequest } from 'node:http';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { request, sleep, startLoad } from '../chaos/support/load.ts';
import { type Balancer, startNginx } from '../chaos/support/nginx.ts';
import { startThrowawayPostgres } from '../chaos/support/postgres.ts';
import { cli, createAccount, type ServerProcess, startServer } from '../chaos/support/server.ts';

const { values: args } = parseArgs({
  options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '64' } },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);

/**
 * One request to nginx as an account's visitor: from a loopback address of its own (the address
 * nginx appends to X-Forwarded-For), to the account's host by its Host header.
 */
function viaNginx(
  from: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; cookies: string[]; body: string }> {
  const url = new URL(path, balancer?.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, localAddress: from, headers: { ...headers, host: 'forms.test' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0] ?? ''),
          body: text,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const db = await startThrowawayPostgres();
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};
let servers: ServerProcess[] = [];
let balancer: Balancer | undefined;
try {
  const { token } = createAccount(db.url, 'scale');
  const auth = { authorization: `Bearer ${token}` };
  const json = { ...auth, 'content-type': 'application/json' };
  servers = await Promise.all(
    Array.from({ length: 4 }, () =>
      // Behind one proxy, as the compose stack runs them; 5 form posts a minute per visitor.
      startServer(db.url, { RATE_LIMIT: '0', LOG_LEVEL: 'error', TRUST_PROXY: '1', FORM_LIMIT_PER_IP: '5' }),
    ),
  );
  const ports = servers.map((s) => Number(new URL(s.baseUrl).port));
  // Something to read.
  for (let i = 0; i < 60; i++) {
    await request('create', `${servers[0]?.baseUrl}/api/v1/conversations/create_conversation`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ title: `Seed ${i}`, slug: `seed-${i}` }),
    });
  }

  console.log(`\nmixed load through nginx (round robin): ${CONNECTIONS} connections, ${DURATION} s per row`);
  console.log('replicas |   req/s  p50 ms  p99 ms  non-2xx  errors');
  let n = 0;
  for (const replicas of [1, 2, 4]) {
    balancer = await startNginx(ports.slice(0, replicas));
    const r = await autocannon({
      url: balancer.url,
      connections: CONNECTIONS,
      duration: DURATION,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/conversations/create_conversation',
          headers: json,
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ title: `load ${replicas}-${++n}` }) }),
        },
        { method: 'GET', path: '/api/v1/conversations/get_conversation?slug=seed-7', headers: auth },
        { method: 'GET', path: '/api/v1/conversations/get_conversation?title=Seed%2012', headers: auth },
        { method: 'GET', path: '/api/v1/conversations/get_conversations?page=1', headers: auth },
      ],
    });
    const non2xx = r.non2xx;
    console.log(
      `${String(replicas).padStart(8)} | ${String(Math.round(r.requests.average)).padStart(7)} ${String(r.latency.p50).padStart(7)} ${String(r.latency.p99).padStart(7)} ${String(non2xx).padStart(8)} ${String(r.errors).padStart(7)}`,
    );
    if (non2xx > 0 || r.errors > 0) failures.push(`${replicas} replicas: ${non2xx} non-2xx, ${r.errors} errors`);
    if (replicas < 4) await balancer.stop();
  }
  console.log(
    `(2 cores here are shared by the replicas, PostgreSQL, nginx and the load generator, so more replicas add no CPU)`,
  );

  console.log('\nwhat the four replicas share');
  const api = (i: number) => `${servers[i]?.baseUrl}/api/v1/conversations`;
  const made = await request('create', `${api(0)}/create_conversation`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ title: 'Made on replica 1', slug: 'made-on-one' }),
  });
  const seen = await request('read', `${api(1)}/get_conversation?slug=MADE-ON-ONE`, { headers: auth });
  check(
    made.status === 201 && seen.status === 200 && seen.body.id === made.body.id,
    'created on replica 1, read on replica 2',
  );
  const keyed = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      request('create', `${api(i % 4)}/create_conversation`, {
        method: 'POST',
        headers: { ...json, 'idempotency-key': 'scale-once' },
        body: JSON.stringify({ title: 'Once across replicas' }),
      }),
    ),
  );
  check(
    keyed.every((r) => r.status === 201) && new Set(keyed.map((r) => r.body.id)).size === 1,
    `one Idempotency-Key sent to all 4 replicas 40 times: ${new Set(keyed.map((r) => r.body.id)).size} conversation`,
  );
  createAccount(db.url, 'limited');
  cli(db.url, ['account', 'rate-limit', '--key', 'limited', '--limit', '25']);
  const limitedToken = cli(db.url, ['token', 'create', '--account', 'limited']).token;
  const limited = await Promise.all(
    Array.from({ length: 100 }, () =>
      request('read', `${balancer?.url}/api/v1/conversations/get_conversation`, {
        headers: { authorization: `Bearer ${limitedToken}` },
      }),
    ),
  );
  const served = limited.filter((r) => r.status === 404).length; // the account has no conversation
  const refused = limited.filter((r) => r.status === 429).length;
  check(
    served === 25 && refused === 75,
    `rate limit 25 through nginx over 4 replicas: ${served} served, ${refused} refused`,
  );

  console.log('\nform limits behind nginx ($proxy_add_x_forwarded_for, TRUST_PROXY=1)');
  cli(db.url, [
    'account',
    'create',
    '--key',
    'forms',
    '--name',
    'Forms',
    '--host',
    'http://forms.test',
    '--owner-email',
    'o@forms.test',
    '--owner-name',
    'Owner',
  ]);
  const formsToken = cli(db.url, ['token', 'create', '--account', 'forms']).token;
  await request('create', `${api(0)}/create_conversation`, {
    method: 'POST',
    headers: { authorization: `Bearer ${formsToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Open', slug: 'open', allow_anonymous_messages: true }),
  });
  const visitorPosts = async (from: string, forge: (i: number) => string | undefined) => {
    const page = await viaNginx(from, 'GET', '/c/open', {});
    const cookie = page.cookies.join('; ');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const forged = forge(i);
      const res = await viaNginx(
        from,
        'POST',
        '/c/open',
        {
          cookie,
          origin: 'http://forms.test',
          'content-type': 'application/x-www-form-urlencoded',
          ...(forged ? { 'x-forwarded-for': forged } : {}),
        },
        new URLSearchParams({ csrf, text: `from ${from} #${i}` }).toString(),
      );
      statuses.push(res.status);
    }
    return statuses;
  };
  const first = await visitorPosts('127.0.0.2', (i) => `198.51.100.${i}`);
  check(
    first.join() === '303,303,303,303,303,429,429',
    `a visitor forging a new X-Forwarded-For entry on each post is limited after 5: ${first.join(' ')}`,
  );
  const second = await visitorPosts('127.0.0.3', () => undefined);
  check(
    second.filter((s) => s === 303).length === 5,
    `another visitor (another address) keeps a quota of their own: ${second.join(' ')}`,
  );

  console.log('\none replica killed (SIGKILL) under load through nginx');
  const load = startLoad(32, (w, i) =>
    i % 2 === 0
      ? request('create', `${balancer?.url}/api/v1/conversations/create_conversation`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ title: `kill ${w}-${i}` }),
        })
      : request('read', `${balancer?.url}/api/v1/conversations/get_conversations?page=1`, { headers: auth }),
  );
  await sleep(2_000);
  const killedUpstream = `127.0.0.1:${ports[3]}`;
  await servers[3]?.kill('SIGKILL');
  // The moment its exit was seen: requests sent to it until then were in its hands.
  const killedAt = performance.now();
  await sleep(3_000);
  await load.stop();
  const failed = load.outcomes.filter((o) => o.status >= 500 || o.status === 0);
  const inFlight = load.outcomes.filter((o) => o.started <= killedAt && o.started + o.ms >= killedAt);
  const after = load.outcomes.filter((o) => o.started > killedAt + 100);
  const kinds: Record<string, number> = {};
  for (const o of failed)
    kinds[`${o.kind} ${o.status || o.error}`] = (kinds[`${o.kind} ${o.status || o.error}`] ?? 0) + 1;
  console.log(
    `  ${load.outcomes.length} requests; ${inFlight.length} in flight at the kill; ${failed.length} failed ${JSON.stringify(kinds)}`,
  );
  check(
    failed.length <= inFlight.length && failed.every((o) => o.upstream?.split(', ').at(-1) === killedUpstream),
    'only requests the killed replica had in flight failed (nginx names it as their upstream)',
  );
  check(
    failed.every((o) => o.started <= killedAt),
    'no request started after the kill failed',
  );
  check(
    after.length > 0 && after.every((o) => o.status < 300),
    `the ${after.length} requests after the kill all succeeded`,
  );
} finally {
  await balancer?.stop();
  await Promise.all(servers.map((s) => s.kill()));
  db.destroy();
}
if (failures.length > 0) {
  console.log(`\nscale-test: ${failures.length} failed:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('\nscale-test: all checks passed');
