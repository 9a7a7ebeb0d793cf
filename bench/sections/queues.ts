import { createAccountWithoutToken, migrate, nativeClient, openOrm, PgMailOutbox } from '@convo/db';
import type { MikroORM } from '@mikro-orm/core';
import { SqlEntityManager } from '@mikro-orm/sql';
import { Logger as GraphileLogger, runMigrations as migrateGraphile, run as runGraphile } from 'graphile-worker';
import pg from 'pg';
import { fromKysely, fromPglite, PgBoss } from 'pg-boss';
import { DB, log } from '../options.ts';

/*
 * The queues, measured against the two well-kept PostgreSQL job queues that could replace them
 * (docs/architecture.md, "The queues", says what was decided from these figures):
 *
 * - enqueue: a job written in the same transaction as the change it follows (the outbox
 *   guarantee), each transaction on its own: ours (a row of the queue's table, here the mail
 *   outbox), pg-boss (`send` on the transaction, through its Kysely adapter over MikroORM's own
 *   Kysely), graphile-worker (`graphile_worker.add_job` called in the transaction);
 * - drain: that many jobs taken by one worker, ten at a time, with nothing to do per job;
 * - lanes: jobs of 20 keys, each key's jobs in order and one at a time (our webhook deliveries,
 *   one endpoint at a time): pg-boss's `key_strict_fifo` queue, graphile-worker's named queues;
 * - the same enqueue and drain on embedded PGlite, where graphile-worker does not run (it needs a
 *   server connection for LISTEN and its pool).
 */

const JOBS = 3_000;
const LANE_JOBS = 2_000;
const LANES = 20;

interface Figures {
  enqueuePerS: number;
  drainPerS: number;
}

const perSecond = (n: number, ms: number) => Math.round((n * 1000) / ms);

async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Resolves when `done()` says so, checked every few milliseconds (a drain's end). */
async function until(done: () => boolean, limitMs = 300_000): Promise<void> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > limitMs) throw new Error('the queue did not drain in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A fresh database on the bench's server, migrated, with one account; dropped by `close`. */
async function freshDatabase(name: string) {
  const admin = new pg.Client({ connectionString: DB });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.query(`create database "${name}"`);
  const url = new URL(DB);
  url.pathname = `/${name}`;
  const orm = await openOrm({ kind: 'postgres', url: url.toString(), poolMax: 10 });
  await migrate(orm);
  const account = await createAccountWithoutToken(orm.em.fork(), { key: 'q', name: 'Queues', host: 'https://q.test' });
  return {
    orm,
    url: url.toString(),
    accountId: account.id,
    async close() {
      await orm.close(true);
      // Not forced: a queue library's pool may still be letting its connections go, and forcing
      // would end them under it. A database left behind is dropped by the next run.
      await admin.query(`drop database if exists "${name}"`).catch(() => undefined);
      await admin.end();
    },
  };
}

/** A change the job follows: one row of a table of the bench's own. */
const CHANGE = 'insert into bench_change (at) values (now())';

async function withChangeTable(orm: MikroORM) {
  await orm.em
    .fork()
    .getConnection()
    .execute('create table if not exists bench_change (id serial primary key, at timestamptz)');
}

/** Ours: the mail outbox's table and its claim (claimDue + sent, as the mail worker runs them). */
async function ours(orm: MikroORM, accountId: number, jobs: number): Promise<Figures> {
  await withChangeTable(orm);
  const enqueueMs = await timed(async () => {
    for (let i = 0; i < jobs; i += 1) {
      await orm.em.fork().transactional(async (tx) => {
        await tx.getConnection().execute(CHANGE, [], 'run', tx.getTransactionContext());
        await new PgMailOutbox(tx).enqueue(accountId, { to: `p${i}@q.test`, subject: 'Hello', text: 'Body' });
      });
    }
  });
  const outbox = new PgMailOutbox(orm.em.fork());
  const drainMs = await timed(async () => {
    for (;;) {
      const due = await outbox.claimDue(10);
      if (due.length === 0) break;
      await outbox.sent(due.map((m) => m.id));
    }
  });
  return { enqueuePerS: perSecond(jobs, enqueueMs), drainPerS: perSecond(jobs, drainMs) };
}

/** The Kysely of a MikroORM transaction, as pg-boss's adapter takes it. */
const kyselyOf = (em: unknown) => {
  if (!(em instanceof SqlEntityManager)) throw new Error('a SQL entity manager');
  return em.getKysely();
};

async function pgBoss(orm: MikroORM, boss: PgBoss, jobs: number): Promise<Figures> {
  await withChangeTable(orm);
  await boss.createQueue('bench');
  const enqueueMs = await timed(async () => {
    for (let i = 0; i < jobs; i += 1) {
      await orm.em.fork().transactional(async (tx) => {
        await tx.getConnection().execute(CHANGE, [], 'run', tx.getTransactionContext());
        await boss.send('bench', { to: `p${i}@q.test` }, { db: fromKysely(kyselyOf(tx)) });
      });
    }
  });
  let done = 0;
  const drainMs = await timed(async () => {
    await boss.work(
      'bench',
      { batchSize: 10, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
      async (batch) => {
        done += batch.length;
      },
    );
    await until(() => done >= jobs);
  });
  await boss.offWork('bench');
  return { enqueuePerS: perSecond(jobs, enqueueMs), drainPerS: perSecond(jobs, drainMs) };
}

async function graphile(orm: MikroORM, url: string, jobs: number): Promise<Figures> {
  await withChangeTable(orm);
  await migrateGraphile({ connectionString: url });
  const enqueueMs = await timed(async () => {
    for (let i = 0; i < jobs; i += 1) {
      await orm.em.fork().transactional(async (tx) => {
        const ctx = tx.getTransactionContext();
        await tx.getConnection().execute(CHANGE, [], 'run', ctx);
        await tx
          .getConnection()
          .execute(
            `select graphile_worker.add_job('bench', json_build_object('to', ?::text))`,
            [`p${i}@q.test`],
            'run',
            ctx,
          );
      });
    }
  });
  let done = 0;
  const drainMs = await timed(async () => {
    const runner = await graphileRunner(url, {
      bench: async () => {
        done += 1;
      },
    });
    await until(() => done >= jobs);
    await runner.stop();
  });
  return { enqueuePerS: perSecond(jobs, enqueueMs), drainPerS: perSecond(jobs, drainMs) };
}

/** Lanes: LANE_JOBS jobs over LANES keys; each key's jobs must finish in the order they were queued. */
async function lanesPgBoss(boss: PgBoss): Promise<{ perS: number; inOrder: boolean }> {
  await boss.createQueue('lanes', { policy: 'key_strict_fifo' });
  const seen = new Map<string, number[]>();
  // One at a time, as deliveries are queued: each job's creation time orders its key's lane.
  for (let i = 0; i < LANE_JOBS; i += 1) {
    await boss.send('lanes', { n: i }, { singletonKey: `endpoint-${i % LANES}` });
  }
  let done = 0;
  const ms = await timed(async () => {
    await boss.work<{ n: number }>(
      'lanes',
      { batchSize: 10, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
      async (batch) => {
        for (const job of batch) {
          const key = `endpoint-${job.data.n % LANES}`;
          seen.set(key, [...(seen.get(key) ?? []), job.data.n]);
          done += 1;
        }
      },
    );
    await until(() => done >= LANE_JOBS);
  });
  await boss.offWork('lanes');
  return { perS: perSecond(LANE_JOBS, ms), inOrder: ordered(seen) };
}

async function lanesGraphile(url: string): Promise<{ perS: number; inOrder: boolean }> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  for (let i = 0; i < LANE_JOBS; i += 1) {
    await db.query(`select graphile_worker.add_job('lane', json_build_object('n', $1::int), queue_name => $2)`, [
      i,
      `endpoint-${i % LANES}`,
    ]);
  }
  await db.end();
  const seen = new Map<string, number[]>();
  let done = 0;
  const ms = await timed(async () => {
    const runner = await graphileRunner(url, {
      lane: async (payload) => {
        const n = typeof payload === 'object' && payload !== null && 'n' in payload ? Number(payload.n) : -1;
        const key = `endpoint-${n % LANES}`;
        seen.set(key, [...(seen.get(key) ?? []), n]);
        done += 1;
      },
    });
    await until(() => done >= LANE_JOBS);
    await runner.stop();
  });
  return { perS: perSecond(LANE_JOBS, ms), inOrder: ordered(seen) };
}

const quietGraphile = new GraphileLogger(() => () => {});

/** A graphile-worker runner of `taskList` on the database at `url`, quiet, ten jobs at a time. */
const graphileRunner = (url: string, taskList: Parameters<typeof runGraphile>[0]['taskList']) =>
  runGraphile({
    connectionString: url,
    concurrency: 10,
    noHandleSignals: true,
    pollInterval: 500,
    logger: quietGraphile,
    taskList,
  });

const ordered = (seen: Map<string, number[]>) =>
  [...seen.values()].every((ns) => ns.every((n, i) => i === 0 || n > (ns[i - 1] ?? -1)));

/** Embedded PGlite: ours against pg-boss on the same in-process database (graphile-worker cannot). */
async function onPglite(jobs: number): Promise<{ ours: Figures; pgBoss: Figures }> {
  const orm = await openOrm({ kind: 'pglite' });
  await migrate(orm);
  const account = await createAccountWithoutToken(orm.em.fork(), { key: 'q', name: 'Queues', host: 'https://q.test' });
  const oursFigures = await ours(orm, account.id, jobs);
  const native = await nativeClient(orm.em);
  if (native.kind !== 'pglite') throw new Error('expected PGlite');
  const boss = new PgBoss({ db: fromPglite(native.db), schema: 'pgboss' });
  boss.on('error', (err) => log(`pg-boss: ${err.message}`));
  await boss.start();
  const bossFigures = await pgBoss(orm, boss, jobs);
  await boss.stop({ graceful: true, close: true, timeout: 5_000 });
  await orm.close(true);
  return { ours: oursFigures, pgBoss: bossFigures };
}

export async function queues() {
  log('\nqueues: ours (the mail outbox) against pg-boss and graphile-worker');
  const a = await freshDatabase('convo_bench_queue_ours');
  const oursPg = await ours(a.orm, a.accountId, JOBS);
  await a.close();

  const b = await freshDatabase('convo_bench_queue_pgboss');
  const boss = new PgBoss({ connectionString: b.url, schema: 'pgboss' });
  boss.on('error', (err) => log(`pg-boss: ${err.message}`));
  await boss.start();
  const bossPg = await pgBoss(b.orm, boss, JOBS);
  const bossLanes = await lanesPgBoss(boss);
  await boss.stop({ graceful: true, close: true, timeout: 5_000 });
  await b.close();

  const c = await freshDatabase('convo_bench_queue_graphile');
  const graphilePg = await graphile(c.orm, c.url, JOBS);
  const graphileLanes = await lanesGraphile(c.url);
  await c.close();

  const embedded = await onPglite(Math.round(JOBS / 3));

  const row = (name: string, f: Figures) =>
    `  ${name.padEnd(34)} ${String(f.enqueuePerS).padStart(8)} ${String(f.drainPerS).padStart(8)}`;
  log(`  ${'PostgreSQL'.padEnd(34)} ${'enqueue/s'.padStart(8)} ${'drain/s'.padStart(8)}`);
  log(row('ours (mail outbox)', oursPg));
  log(row('pg-boss 12', bossPg));
  log(row('graphile-worker 0.18', graphilePg));
  log(`  lanes (${LANE_JOBS} jobs, ${LANES} keys, in order per key)`);
  log(`    pg-boss key_strict_fifo: ${bossLanes.perS}/s, in order: ${bossLanes.inOrder}`);
  log(`    graphile-worker named queues: ${graphileLanes.perS}/s, in order: ${graphileLanes.inOrder}`);
  log(`  ${'PGlite'.padEnd(34)} ${'enqueue/s'.padStart(8)} ${'drain/s'.padStart(8)}`);
  log(row('ours (mail outbox)', embedded.ours));
  log(row('pg-boss 12 (fromPglite)', embedded.pgBoss));
  log('    graphile-worker: does not run on PGlite (needs a server connection)');
}
