import type { EntityManager } from '@mikro-orm/core';

/*
 * The driver's own client under MikroORM's connection (its documented getNativeClient()): the
 * pg pool for PostgreSQL, the PGlite instance for the embedded database. The one place that
 * tells them apart: prepared statements, pool figures and pool errors all ask here.
 */

/** A connection checked out of the pg pool; release(err) drops it instead of returning it. */
export interface PgPoolClient {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  off(event: 'error', listener: (err: Error) => void): unknown;
  release(err?: Error): void;
}

export interface PgPool {
  connect(): Promise<PgPoolClient>;
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

export interface Pglite {
  /** PGlite's own signature: the caller names the rows' type. */
  query<T = unknown>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  /** Several statements, unparameterised (PGlite's exec). */
  exec(text: string): Promise<{ rows: unknown[] }[]>;
  /** LISTEN on `channel`; resolves to what stops it. */
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

export type NativeClient = { kind: 'pg'; pool: PgPool } | { kind: 'pglite'; db: Pglite };

const isPgPool = (client: unknown): client is PgPool =>
  typeof client === 'object' && client !== null && 'totalCount' in client && 'connect' in client;

const isPglite = (client: unknown): client is Pglite =>
  typeof client === 'object' && client !== null && 'query' in client && 'listen' in client && !('totalCount' in client);

const clients = new WeakMap<object, Promise<NativeClient>>();

export function nativeClient(em: EntityManager): Promise<NativeClient> {
  const connection = em.getConnection();
  let found = clients.get(connection);
  if (!found) {
    found = connection.getNativeClient().then((client): NativeClient => {
      if (isPgPool(client)) return { kind: 'pg', pool: client };
      if (isPglite(client)) return { kind: 'pglite', db: client };
      throw new Error('unknown database client: neither a pg pool nor PGlite');
    });
    clients.set(connection, found);
  }
  return found;
}

/** Pool figures: connections open, idle, and requests waiting for one; PGlite is one connection. */
export async function poolStats(em: EntityManager): Promise<{ total: number; idle: number; waiting: number }> {
  const n = await nativeClient(em);
  return n.kind === 'pg'
    ? { total: n.pool.totalCount, idle: n.pool.idleCount, waiting: n.pool.waitingCount }
    : { total: 1, idle: 0, waiting: 0 };
}

const listeners = new WeakMap<object, (sql: string) => void>();

/** Who hears each statement this ORM sends (tests count them), set by openOrm. */
export function onStatement(em: EntityManager, listener: (sql: string) => void): void {
  listeners.set(em.getConnection(), listener);
}

/** Reports a statement sent beside the ORM's own (prepared statements) to that listener. */
export function reportStatement(em: EntityManager, sql: string): void {
  listeners.get(em.getConnection())?.(sql);
}
