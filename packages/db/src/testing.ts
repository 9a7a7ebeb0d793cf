import type { MikroORM } from '@mikro-orm/core';
import { migrate, type OrmOptions, openOrm } from './orm.ts';

/**
 * A migrated database for one test file: in-memory PGlite by default, or, when DATABASE_URL
 * names a PostgreSQL server, a fresh database on it that is dropped again afterwards.
 */
export interface TestDatabase {
  orm: MikroORM;
  kind: 'pglite' | 'postgres';
  /** For PostgreSQL: the throwaway database's URL, for other processes to use. */
  url?: string;
  /**
   * For PostgreSQL: where a listening connection goes (LISTEN_DATABASE_URL's server, as the
   * PgBouncer suite sets it, with this database), else `url`.
   */
  listenUrl?: string;
  close(): Promise<void>;
}

export async function openTestDatabase(options: OrmOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const orm = await openOrm({ kind: 'pglite' }, options);
    await migrate(orm);
    return { orm, kind: 'pglite', close: () => orm.close(true) };
  }
  const name = `convo_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = await openOrm({ kind: 'postgres', url: serverUrl, poolMax: 1 });
  await admin.em.getConnection().execute(`create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // DB_NAMED_STATEMENTS=false runs the suite as it would run behind PgBouncer in transaction mode.
  const namedStatements = process.env.DB_NAMED_STATEMENTS !== 'false';
  const orm = await openOrm({ kind: 'postgres', url: url.toString(), poolMax: 10, namedStatements }, options);
  await migrate(orm);
  const listen = new URL(process.env.LISTEN_DATABASE_URL ?? url.toString());
  listen.pathname = `/${name}`;
  return {
    orm,
    kind: 'postgres',
    url: url.toString(),
    listenUrl: listen.toString(),
    async close() {
      await orm.close(true);
      await admin.em.getConnection().execute(`drop database if exists "${name}" with (force)`);
      await admin.close(true);
    },
  };
}
