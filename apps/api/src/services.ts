import { mkdirSync } from 'node:fs';
import { AccountStore, migrate, openOrm } from '@convo/db';
import type { MikroORM } from '@mikro-orm/core';
import type { Config } from './config.ts';
import type { Services } from './context.ts';
import type { Logger } from './logger.ts';

/** A token's last use is written at most this often per process: reads stay free of writes. */
export const TOKEN_TOUCH_INTERVAL_MS = 60_000;

export async function openDatabase(config: Config, logger: Logger): Promise<MikroORM> {
  const db = config.database;
  if (db.kind === 'pglite') mkdirSync(db.dataDir, { recursive: true });
  const orm =
    db.kind === 'postgres'
      ? await openOrm({ kind: 'postgres', url: db.url, poolMax: db.poolMax })
      : await openOrm({ kind: 'pglite', dataDir: db.dataDir });
  logger.info({ database: db.kind === 'postgres' ? 'postgres' : `pglite:${db.dataDir}` }, 'database connected');
  return orm;
}

export async function migrateDatabase(orm: MikroORM, logger: Logger): Promise<void> {
  const applied = await migrate(orm);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
}

export function createServices(orm: MikroORM, logger: Logger): Services {
  const lastTouch = new Map<number, number>();
  return {
    forkEm: () => orm.em.fork(),
    logger,
    async touchToken(tokenId) {
      const now = Date.now();
      if ((lastTouch.get(tokenId) ?? 0) + TOKEN_TOUCH_INTERVAL_MS > now) return;
      lastTouch.set(tokenId, now);
      await new AccountStore(orm.em.fork()).touchToken(tokenId);
    },
  };
}
