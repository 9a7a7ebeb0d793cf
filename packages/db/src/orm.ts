import type { MikroORM, Options } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities/index.ts';
import { migrationsList } from './migrations/index.ts';
import { nativeClient, onStatement } from './native.ts';
import { disableNamedStatements } from './repositories/prepared.ts';

/** Where the data lives: a PostgreSQL server, or embedded PGlite (a directory, or memory). */
export type DatabaseTarget =
  | {
      kind: 'postgres';
      url: string;
      poolMax?: number;
      statementTimeoutMs?: number;
      /** False behind a pooler in transaction mode (PgBouncer): no named prepared statements. */
      namedStatements?: boolean;
    }
  | { kind: 'pglite'; dataDir?: string };

export interface OrmOptions {
  /** Called with every SQL statement the ORM sends (tests count them; operators may log them). */
  onQuery?: (sql: string) => void;
  /** Told when an idle pooled connection fails (the pool recovers by itself). */
  onPoolError?: (err: Error) => void;
}

function commonOptions(settings: OrmOptions): Partial<Options> {
  return {
    entities,
    extensions: [Migrator],
    // Entities are listed explicitly: no folder discovery, nothing for Deno to glob.
    discovery: { warnWhenNoEntities: true },
    migrations: { migrationsList, snapshot: false, silent: true, transactional: true, allOrNothing: true },
    // Each request forks its own EntityManager; the global one is never used for work.
    allowGlobalContext: false,
    ...(settings.onQuery
      ? { debug: ['query'], logger: (message: string) => settings.onQuery?.(message), colors: false }
      : { debug: false }),
  };
}

export async function openOrm(target: DatabaseTarget, settings: OrmOptions = {}): Promise<MikroORM> {
  if (target.kind === 'postgres') {
    const { MikroORM } = await import('@mikro-orm/postgresql');
    const orm = await MikroORM.init({
      ...commonOptions(settings),
      clientUrl: target.url,
      pool: { min: 0, max: target.poolMax ?? 10 },
      // Merged into pg's pool config: no statement holds a connection past this, and a pool that
      // cannot connect fails a request instead of queueing it forever.
      driverOptions: {
        statement_timeout: target.statementTimeoutMs ?? 5_000,
        idle_in_transaction_session_timeout: (target.statementTimeoutMs ?? 5_000) * 2,
        connectionTimeoutMillis: 3_000,
      },
    } as Options);
    // An idle connection dropped by the server (restart, failover) is an error event on the pool;
    // unheard, Node would end the process. The pool replaces the connection on next use.
    const native = await nativeClient(orm.em);
    if (native.kind === 'pg') native.pool.on('error', (err) => settings.onPoolError?.(err));
    if (target.namedStatements === false) disableNamedStatements(orm.em);
    if (settings.onQuery) onStatement(orm.em, settings.onQuery);
    return orm;
  }
  const { MikroORM } = await import('@mikro-orm/pglite');
  const orm = await MikroORM.init({
    ...commonOptions(settings),
    ...(target.dataDir ? { dbName: target.dataDir } : {}),
  } as Options);
  if (settings.onQuery) onStatement(orm.em, settings.onQuery);
  return orm;
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}

export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  return (await orm.migrator.getPending()).map((m) => m.name);
}
