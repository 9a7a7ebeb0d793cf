import type { EntityManager } from '@mikro-orm/core';
import { nativeClient, type PgPool, reportStatement } from '../native.ts';

/*
 * The hot read statements run as named prepared statements on the ORM's own pool. MikroORM's
 * execute() inlines parameters into the SQL text, so PostgreSQL parses and plans every request's
 * query anew; prepared once per connection, those plans are reused (measured: 5,000 lookups took
 * 801 ms through execute() and 448 ms prepared, with PostgreSQL sharing the machine's two cores).
 * Statements use $n placeholders. Embedded PGlite runs them as plain parameterised queries.
 */

/*
 * Connections through a pooler in transaction mode (PgBouncer before 1.21) must not use named
 * statements: the next transaction may run on another server connection, where the name is unknown.
 * There, statements go unnamed (parsed and planned each time, still parameterised).
 */
const unnamed = new WeakSet<object>();

/** Sends this ORM's prepared statements unnamed from now on. */
export function disableNamedStatements(em: EntityManager): void {
  unnamed.add(em.getConnection());
}

/** A fixed statement: one name for one text, for the life of the process. */
export interface Prepared {
  name: string;
  text: string;
}

export async function runPrepared<T>(em: EntityManager, statement: Prepared, params: unknown[]): Promise<T[]> {
  if (em.getTransactionContext()) {
    throw new Error(`prepared statement ${statement.name} must not run inside a transaction`);
  }
  const n = await nativeClient(em);
  // Reported like every statement the ORM sends itself (tests count them).
  reportStatement(em, statement.text);
  if (n.kind === 'pglite') return (await n.db.query<T>(statement.text, params)).rows;
  const config = unnamed.has(em.getConnection())
    ? { text: statement.text, values: params }
    : { name: statement.name, text: statement.text, values: params };
  return (await queryKeepingConnection(n.pool, config)).rows as T[];
}

/**
 * A statement PostgreSQL refused (severity ERROR: a unique violation, a bad value, a statement
 * timeout) leaves its connection as good as it was; a FATAL one or a dropped socket does not.
 */
const refusedStatement = (e: unknown): boolean => e instanceof Error && 'severity' in e && e.severity === 'ERROR';

/**
 * pg's pool.query() drops the connection after any error at all, so every refused create (a taken
 * slug: 409) cost a new connection, its authentication and its prepared statements again: 30 ms
 * each, and under 500 concurrent creates of 50 slugs the pool's waits ran past their timeout (503).
 * Here the connection goes back to the pool after a refused statement and is dropped only when
 * it broke. While checked out it needs an error listener of its own, as pool.query() adds one: a
 * socket error on a busy client is emitted, and unheard it would end the process.
 */
async function queryKeepingConnection(pool: PgPool, config: { name?: string; text: string; values: unknown[] }) {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
  };
  client.on('error', onError);
  let dropWith: Error | undefined;
  try {
    return await client.query(config);
  } catch (e) {
    if (!refusedStatement(e)) dropWith = e instanceof Error ? e : new Error(String(e));
    throw e;
  } finally {
    client.off('error', onError);
    client.release(broken ?? dropWith);
  }
}
