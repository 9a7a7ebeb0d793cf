import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/core';

/**
 * Raw SQL through MikroORM's own connection: the read path only serialises rows, so hydrating
 * entities would be work thrown away. Placeholders are `?`.
 */
export async function query<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  // Inside em.transactional() the statement must join that transaction, not take a pool connection.
  const rows: T[] = await em.getConnection().execute(sql, params, 'all', em.getTransactionContext());
  return rows;
}

/**
 * Integers as one array parameter (`= any(?::int[])`): the ORM's execute() would spread a
 * JavaScript array into a list of values, so it travels as PostgreSQL's array text.
 */
export const intArray = (values: readonly number[]): string => `{${values.map((v) => Math.trunc(v)).join(',')}}`;

/** json columns arrive parsed from node-postgres and as text from some drivers; accept both. */
export const fromJson = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

/** The unique index `index` refused a write: as the ORM reports it, or as the driver does (a raw statement). */
export const violatesUnique = (e: unknown, index: string): boolean =>
  (e instanceof UniqueConstraintViolationException && e.message.includes(index)) ||
  (e instanceof Error &&
    (e as { code?: unknown }).code === '23505' &&
    ((e as { constraint?: unknown }).constraint === index || e.message.includes(index)));
