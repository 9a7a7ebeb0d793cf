import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Outcome, request, sleep, startLoad } from './support/load.ts';
import { binDir, startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { cli, cliAsync, createAccount, type ServerProcess, startServer } from './support/server.ts';

/*
 * The restore drill, as an operator would run it, while the server is under load (creates and
 * reads): `pg_dump` of the live database, `pg_restore` into an empty one, a second server started
 * on the restore; and `convo export` of the live account, loaded with `convo seed` into another
 * empty database. Every create acknowledged before the dump (or export) began must be in it, the
 * restored server must be ready at once, and it must answer as the live one does.
 */

const PRELOAD = 100_000;
let db: ThrowawayPostgres;
let live: ServerProcess;
let restored: ServerProcess | undefined;
let token: string;
let preloadToken: string;
let dir: string;

const databaseUrl = (name: string) => {
  const url = new URL(db.url);
  url.pathname = `/${name}`;
  return url.toString();
};

async function sql<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

const execFileAsync = promisify(execFile);

const timed = <T>(work: () => T): { value: T; seconds: number } => {
  const started = performance.now();
  const value = work();
  return { value, seconds: (performance.now() - started) / 1000 };
};

/** As `timed`, for work that runs beside the load (a child process awaited, not waited on). */
const timedAsync = async <T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> => {
  const started = performance.now();
  const value = await work();
  return { value, seconds: (performance.now() - started) / 1000 };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'convo-drill-'));
  db = await startThrowawayPostgres();
  token = createAccount(db.url, 'drill').token;
  // Data to dump: PRELOAD conversations with three messages each, through the seed loader.
  const seed = join(dir, 'preload.json');
  const conversations = Array.from({ length: PRELOAD }, (_, i) => ({
    title: `Preloaded ${i}`,
    messages: [0, 1, 2].map((m) => ({ author: null, text: `message ${m} of ${i}` })),
  }));
  writeFileSync(
    seed,
    JSON.stringify({ accounts: [{ key: 'preload', name: 'Preload', host: 'preload.example.com', conversations }] }),
  );
  preloadToken = cli(db.url, ['seed', seed]).accounts[0].tokens[0].token;
  live = await startServer(db.url);
}, 180_000);

afterAll(async () => {
  await restored?.kill();
  await live?.kill();
  db?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('restores a pg_dump taken under load, and loads an export taken under load, losing no acknowledged create', async () => {
  const api = `${live.baseUrl}/api/v1/conversations`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const load = startLoad(8, (w, n) =>
    n % 2 === 0
      ? request('create', `${api}/create_conversation`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ title: `drill ${w} #${n}` }),
        })
      : request('read', `${api}/get_conversations?page=${1 + (n % 20)}`, {
          headers: { authorization: `Bearer ${preloadToken}` },
        }),
  );
  await sleep(2_000);
  const acknowledgedBy = (t: number) =>
    load.outcomes.filter((o) => o.kind === 'create' && o.status === 201 && o.started + o.ms < t);

  // 1. pg_dump of the live database, in the custom format, while the load goes on.
  const dumpFile = join(dir, 'convo.dump');
  const dumpStart = performance.now();
  const beforeDump = acknowledgedBy(dumpStart);
  const dump = await timedAsync(() =>
    execFileAsync(join(binDir(), 'pg_dump'), ['--format=custom', `--file=${dumpFile}`, databaseUrl('postgres')]),
  );

  // 2. convo export of the live account, while the load goes on.
  const exportFile = join(dir, 'drill.json');
  const exportStart = performance.now();
  const beforeExport = acknowledgedBy(exportStart);
  const exported = await timedAsync(() => cliAsync(db.url, ['export', '--account', 'drill', '--out', exportFile]));
  await sleep(1_000);
  await load.stop();

  // 3. pg_restore into an empty database, and a server on it.
  await sql(db.url, 'create database restored');
  const restore = timed(() =>
    execFileSync(join(binDir(), 'pg_restore'), ['--no-owner', `--dbname=${databaseUrl('restored')}`, dumpFile], {
      stdio: 'pipe',
    }),
  );
  const serverStart = performance.now();
  restored = await startServer(databaseUrl('restored'), { MIGRATE_ON_START: 'false' });
  const readyAfter = (performance.now() - serverStart) / 1000;

  // 4. The export loaded with seed into another empty database.
  await sql(db.url, 'create database fromexport');
  const seeded = timed(() => cli(databaseUrl('fromexport'), ['seed', exportFile]));

  const ids = (list: Outcome[]) => list.map((o) => o.body.id as number);
  const inRestore = await sql<{ n: number }>(
    databaseUrl('restored'),
    'select count(*)::int as n from conversation where id = any($1)',
    [ids(beforeDump)],
  );
  const restoredTotal = await sql<{ n: number }>(
    databaseUrl('restored'),
    'select count(*)::int as n from conversation',
  );
  const exportedSlugs = await sql<{ n: number }>(
    databaseUrl('fromexport'),
    'select count(*)::int as n from conversation where slug = any($1)',
    [beforeExport.map((o) => o.body.slug as string)],
  );
  const creates = load.outcomes.filter((o) => o.kind === 'create');
  const size = statSync(dumpFile).size;
  console.log(
    [
      `restore drill: ${load.outcomes.length} requests under load (${creates.length} creates, ${creates.filter((o) => o.status === 201).length} acknowledged), ${PRELOAD} conversations preloaded`,
      `  pg_dump under load: ${dump.seconds.toFixed(1)} s, ${(size / 1_048_576).toFixed(1)} MB; ${beforeDump.length} creates acknowledged before it began, ${inRestore[0]?.n} of them restored; ${restoredTotal[0]?.n} conversations in the restore`,
      `  pg_restore: ${restore.seconds.toFixed(1)} s; the server on it ready ${readyAfter.toFixed(1)} s after starting`,
      `  export under load: ${exported.seconds.toFixed(1)} s, ${exported.value.conversations} conversations; seed of it: ${seeded.seconds.toFixed(1)} s; ${exportedSlugs[0]?.n} of ${beforeExport.length} acknowledged before it began are in it`,
    ].join('\n'),
  );

  const unanswered = load.outcomes
    .filter((o) => o.status !== 200 && o.status !== 201)
    .map(({ kind, status, ms, body, error }) => ({ kind, status, ms: Math.round(ms), body, error }));
  expect(unanswered).toEqual([]);
  expect(beforeDump.length).toBeGreaterThan(0);
  expect(inRestore[0]?.n).toBe(beforeDump.length);
  expect(exportedSlugs[0]?.n).toBe(beforeExport.length);
  expect(exported.value.conversations).toBeGreaterThanOrEqual(beforeExport.length);
  expect(seeded.value.counts.conversations).toBe(exported.value.conversations);

  // The restored server answers as the live one does, for the preloaded account's pages and for
  // conversations created under load.
  // (The restore holds the tokens' hashes: the same tokens work on it.)
  for (const page of [1, 7, 400]) {
    const [a, b] = await Promise.all(
      [live, restored].map(async (server) => {
        const res = await fetch(`${server.baseUrl}/api/v1/conversations/get_conversations?page=${page}`, {
          headers: { authorization: `Bearer ${preloadToken}` },
        });
        return { status: res.status, body: await res.json() };
      }),
    );
    expect(b).toEqual(a);
    expect(a?.status).toBe(200);
  }
  for (const o of beforeDump.slice(0, 50)) {
    const path = `/api/v1/conversations/get_conversation?slug=${o.body.slug}`;
    const [a, b] = await Promise.all(
      [live, restored].map(async (server) =>
        (await fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } })).json(),
      ),
    );
    expect(b).toEqual(a);
  }
}, 240_000);
