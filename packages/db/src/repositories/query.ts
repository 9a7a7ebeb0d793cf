import type { EntityManager } from '@mikro-orm/core';
import { type InferKyselyDB, SqlEntityManager } from '@mikro-orm/sql';
import {
  type Compilable,
  CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
  sql,
} from 'kysely';
import type { Schema } from '../entities/index.ts';
import { reportStatement } from '../native.ts';
import { runPrepared } from './prepared.ts';

/** The database as MikroORM's entities describe it: a renamed column fails to compile where it is read. */
export type Database = InferKyselyDB<Schema>;

/**
 * Builds statements, never runs them (Kysely's documented way to split building from running).
 * The hot statements are built once, at import, and run as named prepared statements
 * (`prepared.ts`); the ORM's `em.getKysely()` runs the others in the request's transaction.
 */
export const db: Kysely<Database> = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** Where a run's argument goes in a statement built once. */
class Slot {
  readonly key: string;
  constructor(key: string) {
    this.key = key;
  }
}

/** A statement's parameter, filled at each run from the argument of that name. */
export const slot = <T>(key: string): RawBuilder<T> => sql<T>`${new Slot(key)}`;

/** A statement built once; its rows' type is the query's own. */
export interface Statement<Row> {
  name: string;
  text: string;
  /** Each $n: the run's argument of that name. */
  parameters: readonly { key: string }[];
  /** Carries the row type (never read). */
  readonly row?: Row;
}

/** The row type of a statement. */
export type RowOf<S> = S extends Statement<infer Row> ? Row : never;

/**
 * A constant of a statement (`.limit(1)`, `'pending'`) written into its text as Kysely writes a
 * `sql.lit` value, so that PostgreSQL plans with it. As a parameter it is unknown to the generic
 * plan: a `limit $5` is planned as a tenth of the table, the plan built once looks dearer than one
 * built for each run's values, and PostgreSQL goes on parsing and planning every run (a lookup's
 * database CPU tripled once the account outgrew the estimate). A value no literal can say is a
 * mistake in the statement: it must be a slot.
 */
function literal(name: string, value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  // In parentheses when negative: `a -$1` must not become a comment.
  if (typeof value === 'number' && Number.isFinite(value)) return value < 0 ? `(${value})` : String(value);
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  throw new Error(`statement ${name}: the constant ${String(value)} is not a literal; make it a slot`);
}

/**
 * Compiles `query` once. A slot used twice is one parameter ($n) of the statement, so the
 * statement binds each argument once; a constant is written into the text (`literal`).
 */
export function statement<Row>(name: string, query: Compilable<Row>): Statement<Row> {
  const compiled = query.compile();
  const parameters: { key: string }[] = [];
  const slots = new Map<string, number>();
  const renumbered = compiled.parameters.map((p) => {
    if (!(p instanceof Slot)) return literal(name, p);
    const known = slots.get(p.key);
    if (known !== undefined) return `$${known}`;
    const n = parameters.push({ key: p.key });
    slots.set(p.key, n);
    return `$${n}`;
  });
  // Kysely writes parameters only as $1..$n, and the statements' SQL fragments hold no `$`.
  const text = compiled.sql.replace(/\$(\d+)\b/g, (_, n: string) => renumbered[Number(n) - 1] as string);
  return { name, text, parameters };
}

/**
 * Runs a statement built once; `args` fill its slots. Outside a transaction it is prepared on the
 * connection; inside one (prepared statements run outside) it is sent as it is, in that transaction.
 */
export async function run<Row>(
  em: EntityManager,
  s: Statement<Row>,
  args: Readonly<Record<string, unknown>>,
): Promise<Row[]> {
  const values = s.parameters.map((p) => {
    if (!(p.key in args)) throw new Error(`statement ${s.name} needs an argument "${p.key}"`);
    return args[p.key];
  });
  if (!em.getTransactionContext()) return runPrepared<Row>(em, s, values);
  return execute<Row>(em, CompiledQuery.raw(s.text, values));
}

/**
 * Runs a typed query on MikroORM's own Kysely: in the request's transaction when there is one,
 * parameterised, and reported like every statement the ORM sends (tests count them).
 */
export function exec<Row>(em: EntityManager, query: Compilable<Row>): Promise<Row[]> {
  return execute(em, query.compile());
}

async function execute<Row>(em: EntityManager, compiled: CompiledQuery<Row>): Promise<Row[]> {
  if (!(em instanceof SqlEntityManager)) throw new Error('typed queries need a SQL entity manager');
  reportStatement(em, compiled.sql);
  return (await em.getKysely().executeQuery(compiled)).rows;
}

/** The first row of a typed query, or undefined. */
export async function first<Row>(em: EntityManager, query: Compilable<Row>): Promise<Row | undefined> {
  const [row] = await exec(em, query);
  return row;
}

/** The rows of `name`, a CTE earlier in the same statement, to select from. */
export const rowsOf = (name: string) => db.selectFrom(sql.table(name).as(name));

/** A column of a CTE (`added.id`), as an expression of the type the caller knows it has. */
export const column = <T>(ref: string): RawBuilder<T> => sql<T>`${sql.ref(ref)}`;

/** A time column as the API writes it (ISO 8601, UTC, milliseconds). */
export const isoTime = (ref: string) =>
  sql<string>`to_char(${sql.ref(ref)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Addresses compare ignoring case, as the unique index on (account_id, lower(email)) does. */
export const sameAddress = (column: string, other: unknown) =>
  sql<boolean>`lower(${sql.ref(column)}) = lower(${other})`;
