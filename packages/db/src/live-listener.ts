import type { EntityManager } from '@mikro-orm/core';
import type { Client } from 'pg';
import { nativeClient } from './native.ts';

/*
 * The one listening connection of a process: `LISTEN convo_live` on a connection of its own (a
 * pooler in transaction mode would hand LISTEN's session to someone else, so LISTEN_DATABASE_URL
 * may point past it), or PGlite's listen() on the embedded database. A connection that is lost is
 * made again, with a growing pause; each time it is (re)made, `connected` is told, so the reader
 * catches up from the database on whatever was written meanwhile. A notification only wakes the
 * reader: the events themselves are always read from their rows.
 */

export const LIVE_CHANNEL = 'convo_live';

export interface LiveListenerEvents {
  /** A notification's payload: the ids of the accounts the events are of, comma-separated ('*': many). */
  notified(payload: string): void;
  /** Listening (again): anything written while not listening is to be read now. */
  connected(): void;
  /** The connection was lost; it is being made again. */
  lost(err: Error): void;
}

export interface LiveListener {
  close(): Promise<void>;
}

export type ListenTarget = { kind: 'postgres'; url: string } | { kind: 'embedded'; em: EntityManager };

const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 5_000;
/** How often an idle listening connection is asked whether it is still there. */
const PING_MS = 10_000;

export function listenLive(target: ListenTarget, events: LiveListenerEvents): LiveListener {
  return target.kind === 'postgres' ? listenOnServer(target.url, events) : listenEmbedded(target.em, events);
}

function listenOnServer(url: string, events: LiveListenerEvents): LiveListener {
  let client: Client | null = null;
  let closed = false;
  let pause = FIRST_PAUSE_MS;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let ping: ReturnType<typeof setInterval> | undefined;

  const drop = (c: Client, err: Error) => {
    if (client !== c) return;
    client = null;
    clearInterval(ping);
    c.removeAllListeners('notification');
    void c.end().catch(() => {});
    if (closed) return;
    events.lost(err);
    retry = setTimeout(connect, pause);
    pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
  };

  async function connect() {
    if (closed) return;
    // node-postgres is loaded only by a server that listens on one (as the ORM loads its driver).
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: url, keepAlive: true, connectionTimeoutMillis: 3_000 });
    client = c;
    c.on('error', (err) => drop(c, err));
    c.on('end', () => drop(c, new Error('the listening connection ended')));
    c.on('notification', (n) => {
      if (n.channel === LIVE_CHANNEL) events.notified(n.payload ?? '*');
    });
    try {
      await c.connect();
      await c.query(`listen ${LIVE_CHANNEL}`);
    } catch (err) {
      drop(c, err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (client !== c) return;
    pause = FIRST_PAUSE_MS;
    // A connection that died without a word (a network cut) shows itself when asked.
    ping = setInterval(() => {
      c.query('select 1').catch((err: unknown) => drop(c, err instanceof Error ? err : new Error(String(err))));
    }, PING_MS);
    ping.unref();
    events.connected();
  }

  void connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(ping);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}

function listenEmbedded(em: EntityManager, events: LiveListenerEvents): LiveListener {
  const listening = nativeClient(em).then(async (n) => {
    if (n.kind !== 'pglite') throw new Error('the embedded listener needs the embedded database');
    const stop = await n.db.listen(LIVE_CHANNEL, (payload) => events.notified(payload || '*'));
    events.connected();
    return stop;
  });
  return {
    async close() {
      const stop = await listening.catch(() => null);
      await stop?.().catch(() => {});
    },
  };
}
