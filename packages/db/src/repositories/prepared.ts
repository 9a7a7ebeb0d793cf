import type { EntityManager } from '@mikro-orm/core';

/*
 * The hot read statements run as named prepared statements on the ORM's own pool. MikroORM's
 * execute() inlines parameters into the SQL text, so PostgreSQL parses and plans every request's
 * query anew; prepared once per connection, those plans are reused (measured: 5,000 lookups took
 * 801 ms through execute() and 448 ms prepared, with PostgreSQL sharing the machine's two cores).
 * Statements use $n placeholders. Embedded PGlite runs them as plain parameterised queries.
 */

interface PgPool {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

interface Pglite {
  query(text: string, params: unknown[]): Promise<{ rows: unknown[] }>;
}

type Native = { kind: 'pg'; pool: PgPool } | { kind: 'pglite'; db: Pglite };

const natives = new WeakMap<object, Promise<Native>>();

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

function native(em: EntityManager): Promise<Native> {
  const connection = em.getConnection() as unknown as { getNativeClient(): Promise<unknown> };
  let found = natives.get(connection);
  if (!found) {
    found = connection.getNativeClient().then((client) => {
      const c = client as { totalCount?: number };
      return typeof c.totalCount === 'number'
        ? { kind: 'pg', pool: client as PgPool }
        : { kind: 'pglite', db: client as Pglite };
    });
    natives.set(connection, found);
  }
  return found;
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
  const n = await native(em);
  // Reported through the ORM's logger like every other statement (tests count them).
  (em.getConnection() as unknown as { logQuery(sql: string): void }).logQuery(statement.text);
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
