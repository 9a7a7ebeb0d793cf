import type { EntityManager } from '@mikro-orm/core';
import { nativeClient, reportStatement } from '../native.ts';

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
  const result =
    n.kind === 'pg'
      ? await n.pool.query(
          unnamed.has(em.getConnection())
            ? { text: statement.text, values: params }
            : { name: statement.name, text: statement.text, values: params },
        )
      : await n.db.query(statement.text, params);
  return result.rows as T[];
}
