import { type LiveEvent, type Position, parsePosition } from '@convo/domain';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLive, loadSeed, PgLiveLog, purgeLiveEvents } from '../src/index.ts';
import { query } from '../src/repositories/sql.ts';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * The live feed as the database keeps it: every door's change is an event (the triggers), read in
 * an order no later commit can add to in front of, resumable from any position read.
 */

let db: TestDatabase;
let log: PgLiveLog;
let acme: number;
let other: number;
let users: Record<string, number>;
let conversations: Record<string, number>;

const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  query<T>(db.orm.em.fork(), text, params);

const start = async (): Promise<Position> => parsePosition(await log.now()) as Position;

/** Everything readable after `from`, as (kind, message or user) pairs. */
async function after(from: Position, scope: Parameters<PgLiveLog['read']>[1] = null) {
  const read = await log.read(from, scope, 100);
  return { ...read, seen: read.events.map((e) => [e.kind, e.messageId ?? e.userId]) };
}

const postIn = async (conversation: string, text: string, author: number | null = null) =>
  (
    await sql<{ id: number }>(
      `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, author_id, anonymous, text)
       select account_id, id, 'text', 0, ?, ? is null, ? from conversation where id = ? returning id`,
      [author, author, text, conversations[conversation]],
    )
  )[0]?.id as number;

beforeAll(async () => {
  db = await openTestDatabase();
  log = new PgLiveLog(db.orm.em.fork());
  const seeded = await loadSeed(db.orm.em.fork(), {
    accounts: [
      {
        key: 'acme',
        name: 'Acme',
        host: 'https://acme.example.com',
        owner: 'olive@acme.example',
        users: [
          { email: 'olive@acme.example', name: 'Olive' },
          { email: 'pat@customer.example', name: 'Pat' },
        ],
        conversations: [
          { title: 'One', slug: 'one', members: ['pat@customer.example'], messages: [{ author: null, text: 'old' }] },
          { title: 'Two', slug: 'two' },
        ],
      },
      { key: 'other', name: 'Other', host: 'https://other.example.com', conversations: [{ title: 'T', slug: 't' }] },
    ],
  });
  acme = seeded.accounts[0]?.id as number;
  other = seeded.accounts[1]?.id as number;
  users = Object.fromEntries(
    (await sql<{ email: string; id: number }>('select email, id from account_user')).map((u) => [u.email, u.id]),
  );
  conversations = Object.fromEntries(
    (await sql<{ slug: string; id: number }>('select slug, id from conversation')).map((c) => [c.slug, c.id]),
  );
});

afterAll(async () => db?.close());

describe('the live feed', () => {
  it('holds nothing of what a seed loaded', async () => {
    expect(await sql('select * from live_event')).toEqual([]);
  });

  it('has an event for each change a reader sees, whichever statement made it, in order', async () => {
    const from = await start();
    const pat = users['pat@customer.example'] as number;
    const olive = users['olive@acme.example'] as number;
    const first = await postIn('one', 'hello', pat);
    const second = await postIn('one', 'anonymous');
    await sql('update message set hidden_at = now() where id = ?', [first]);
    await sql('update message set text = text where id = ?', [second]);
    await sql('update message set hidden_at = null where id = ?', [first]);
    await sql('delete from message where id = ?', [second]);
    await sql('insert into conversation_member (conversation_id, user_id, account_id) values (?, ?, ?)', [
      conversations.one,
      olive,
      acme,
    ]);
    await sql('delete from conversation_member where conversation_id = ? and user_id = ?', [conversations.one, pat]);
    await sql(
      `insert into site_session (account_id, user_id, token_hash, expires_at) values (?, ?, ?, now() + interval '1 day')`,
      [acme, pat, 'a'.repeat(64)],
    );
    await sql('delete from site_session where user_id = ?', [pat]);
    await sql("update account_user set team_role = 'member' where id = ?", [pat]);
    await sql('update account_user set name = name where id = ?', [pat]);
    await postIn('t', 'elsewhere');

    const read = await after(from);
    expect(read.seen).toEqual([
      ['posted', first],
      ['posted', second],
      ['hidden', first],
      ['shown', first],
      ['deleted', second],
      ['member_added', olive],
      ['member_removed', pat],
      ['signed_out', pat],
      ['team_changed', pat],
      ['posted', expect.any(Number)],
    ]);
    expect(read.held).toBe(false);
    expect(read.stale).toBe(false);
    expect(read.events.at(-1)?.accountId).toBe(other);

    // A conversation's stream reads only its own; the account's, the account's.
    expect((await after(from, { accountId: acme, conversationId: conversations.one as number })).seen).toHaveLength(7);
    expect((await after(from, { accountId: acme, conversationId: null })).seen).toHaveLength(9);
    // Resumed from any position read, the rest follows, and nothing twice.
    const middle = parsePosition(read.events[4]?.position) as Position;
    expect((await after(middle)).seen).toEqual(read.seen.slice(5));
  });

  it('tells the listener which followed accounts changed, after the commit, and nobody of the others', async () => {
    const heard: string[] = [];
    let connected!: () => void;
    const ready = new Promise<void>((r) => {
      connected = r;
    });
    const listener = listenLive(
      db.listenUrl ? { kind: 'postgres', url: db.listenUrl } : { kind: 'embedded', em: db.orm.em },
      {
        notified: (payload) => heard.push(payload),
        connected,
        lost: () => {},
      },
    );
    const quiet = async (ms: number) => {
      await new Promise((r) => setTimeout(r, ms));
      return heard.splice(0);
    };
    const told = async () => {
      const deadline = Date.now() + 5_000;
      while (heard.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return heard.splice(0);
    };
    try {
      await ready;
      const from = await start();
      // Nobody follows either account: the events are written, and nobody is woken.
      await postIn('two', 'unheard');
      expect(await quiet(300)).toEqual([]);
      expect((await after(from)).seen).toEqual([['posted', expect.any(Number)]]);
      await log.watch([acme], 60);
      await postIn('two', 'ping');
      expect(await told()).toEqual([String(acme)]);
      // One statement writing to both accounts names only the one followed.
      await sql(
        `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, anonymous, text)
         select account_id, id, 'text', 0, true, 'both' from conversation where id in (?, ?)`,
        [conversations.two, conversations.t],
      );
      expect(await told()).toEqual([String(acme)]);
      // A watch that lapsed (its process went away without renewing it) wakes nobody.
      await sql(`update live_watch set until = now() - interval '1 second' where account_id = ?`, [acme]);
      await postIn('two', 'lapsed');
      expect(await quiet(300)).toEqual([]);
      // A renewal never shortens another process's longer watch.
      await log.watch([acme, other], 600);
      await log.watch([acme], 5);
      const [row] = await sql<{ left: number }>(
        'select extract(epoch from until - now())::int as left from live_watch where account_id = ?',
        [acme],
      );
      expect(row?.left).toBeGreaterThan(500);
      await postIn('t', 'other');
      expect(await told()).toEqual([String(other)]);
    } finally {
      await listener.close();
    }
  });

  it('says a position it did not write, or one older than it keeps, is stale', async () => {
    expect((await log.read({ xid: 2n ** 62n, id: 1n }, null, 10)).stale).toBe(true);
    const from = await start();
    await postIn('two', 'to be purged');
    await sql(`update live_event set created_at = now() - interval '2 days'`);
    await purgeLiveEvents(db.orm.em.fork());
    expect(await sql('select * from live_event')).toEqual([]);
    const read = await log.read(from, null, 10);
    expect(read).toMatchObject({ events: [], stale: true });
    // From now on, nothing is stale.
    expect((await log.read(await start(), null, 10)).stale).toBe(false);
  });
});

// Two connections of their own: only a server has transactions open side by side.
describe.runIf(process.env.DATABASE_URL)('transactions committed out of order', () => {
  /** Runs `meanwhile` while a transaction with an id of the server's is open in another database. */
  async function whileOpenElsewhere(meanwhile: () => Promise<void>) {
    // The server's own database (the suite's creates one for each file beside it).
    const elsewhere = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await elsewhere.connect();
    try {
      await elsewhere.query('begin');
      // A transaction id of the server's, as any write in that database takes one.
      await elsewhere.query('select pg_current_xact_id()');
      await meanwhile();
    } finally {
      await elsewhere.query('rollback').catch(() => undefined);
      await elsewhere.end();
    }
  }

  /**
   * The feed read from `from` until it has something, for up to two seconds. A transaction that
   * ends while a read looks (another test file's, in its own database) counts as this database's
   * and holds that one read back, as it should: what must not happen is waiting for the
   * transaction held open elsewhere, which stays open all along.
   */
  async function readSoon(from: Position) {
    const deadline = Date.now() + 2_000;
    for (;;) {
      const read = await log.read(from, null, 10);
      if (read.events.length > 0 || Date.now() > deadline) return read;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('does not wait for a transaction open in another database of the same server', async () => {
    const from = await start();
    await whileOpenElsewhere(async () => {
      const id = await postIn('two', 'while another database writes');
      const read = await readSoon(from);
      expect(read.events.map((e) => e.messageId)).toEqual([id]);
      expect(read.held).toBe(false);
    });
  });

  it('starts a stream after what has committed, whatever another database has open', async () => {
    await whileOpenElsewhere(async () => {
      await postIn('two', 'before the stream started');
      const from = await start();
      expect((await log.read(from, null, 10)).events).toEqual([]);
      const id = await postIn('two', 'after it');
      expect((await readSoon(from)).events.map((e) => e.messageId)).toEqual([id]);
    });
  });

  it('holds back a later commit until the older transaction ends, then reads both in order', async () => {
    const from = await start();
    const older = new pg.Client({ connectionString: db.url });
    const newer = new pg.Client({ connectionString: db.url });
    await older.connect();
    await newer.connect();
    try {
      const insert = `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, anonymous, text)
        values ($1, $2, 'text', 0, true, $3)`;
      await older.query('begin');
      await older.query(insert, [acme, conversations.two, 'older']);
      await newer.query(insert, [acme, conversations.two, 'newer']);
      const meanwhile = await log.read(from, null, 10);
      expect(meanwhile).toMatchObject({ events: [], held: true });
      await older.query('commit');
      const read = await log.read(from, null, 10);
      const texts = await Promise.all(
        read.events.map(
          async (e: LiveEvent) =>
            (await sql<{ text: string }>('select text from message where id = ?', [e.messageId]))[0]?.text,
        ),
      );
      expect(texts).toEqual(['older', 'newer']);
      expect(read.held).toBe(false);
    } finally {
      await older.end();
      await newer.end();
    }
  });
});
