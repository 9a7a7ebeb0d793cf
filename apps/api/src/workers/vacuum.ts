import { autovacuumIsOff, CHURNING_TABLES, vacuumChurningTables } from '@convo/db';
import type { MikroORM } from '@mikro-orm/core';
import type { Logger } from '../logger.ts';

/*
 * On a PostgreSQL server whose autovacuum is off, every replica vacuums the few tables the service
 * churns (queues, change marks, rate-limit windows) every `intervalMs`; see @convo/db's
 * maintenance.ts for why. With autovacuum on (PostgreSQL's default) it does nothing: the server
 * already does it better. The embedded database is not vacuumed: it serves one small process.
 * The first round and then one a minute ANALYZE the tables too (the planner's statistics, which
 * such a server never gathers either).
 */

/** How often a round also ANALYZEs the tables (the first round always does). */
const ANALYZE_EVERY_MS = 60_000;

export interface Vacuuming {
  /** Resolves once the server's setting is read: whether this process vacuums. */
  readonly started: Promise<boolean>;
  stop(): Promise<void>;
}

export function startVacuuming(orm: MikroORM, schedule: { intervalMs: number; logger: Logger }): Vacuuming {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  let analyzedAt = Number.NEGATIVE_INFINITY;
  const em = orm.em.fork();

  const round = () => {
    if (running !== null || stopped) return;
    const analyze = Date.now() - analyzedAt >= ANALYZE_EVERY_MS;
    if (analyze) analyzedAt = Date.now();
    running = vacuumChurningTables(em, { analyze })
      .catch((err: unknown) =>
        schedule.logger.warn({ err: (err as Error).message }, 'vacuuming the queue tables failed'),
      )
      .finally(() => {
        running = null;
      });
  };

  const started = (async () => {
    if (schedule.intervalMs <= 0) return false;
    const off = await autovacuumIsOff(em).catch((err: unknown) => {
      schedule.logger.warn({ err: (err as Error).message }, 'could not read the server autovacuum setting');
      return false;
    });
    if (!off || stopped) return false;
    schedule.logger.info(
      { tables: CHURNING_TABLES, everyMs: schedule.intervalMs },
      'autovacuum is off on this server: vacuuming the queue tables ourselves',
    );
    timer = setInterval(round, schedule.intervalMs);
    timer.unref();
    return true;
  })();

  return {
    started,
    async stop() {
      stopped = true;
      await started;
      clearInterval(timer);
      await running;
    },
  };
}
