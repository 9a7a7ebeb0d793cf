import {
  isLiveEventKind,
  type LiveEvent,
  type LiveLog,
  type LiveRead,
  type LiveScope,
  type Position,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type Prepared, runPrepared } from './prepared.ts';
import { query } from './sql.ts';

/*
 * The live feed as PostgreSQL keeps it (the `live_event` rows its triggers write; see the
 * migration 20261129000000). A row is read only once its transaction is older than every one
 * still open that may write this database, so the order read is an order no later commit can add
 * to in front of. Transaction ids are the server's, not the database's: a transaction seen running
 * in another database of the same server writes no row here, and holds nothing back.
 */

/** Events kept this long; a stream away for longer starts again from its page. */
export const LIVE_RETENTION_HOURS = 24;

/**
 * The oldest transaction still open but those seen running in another database (a transaction that
 * ended since the snapshot `s`, or that PostgreSQL does not show, counts as this database's), or the
 * snapshot's xmax with none: no row of this database's feed below it is still to commit.
 */
const horizonOf = (s: string) => `coalesce(
      (select min(x) from pg_snapshot_xip(${s}) x
       where xid(x) not in (select a.backend_xid from pg_stat_activity a
                            where a.backend_xid is not null and a.datname <> current_database())),
      pg_snapshot_xmax(${s}))`;

/**
 * The feed's rows after $1.$2 that `scope` follows, readable now (below the horizon); then one row
 * saying whether more are committed but held behind an older open transaction (a row from beyond
 * this server's transactions, which only a restore can bring, is neither), and whether $1.$2 is
 * stale.
 */
const readSql = (scope: string) => `
  with h as (select pg_current_snapshot() as s),
  b as (select ${horizonOf('h.s')} as horizon from h),
  e as (
    select e.xid::text || '.' || e.id as position, e.kind, e.account_id, e.conversation_id, e.message_id, e.user_id,
      e.internal
    from live_event e, b
    where (e.xid, e.id) > ($1::xid8, $2::bigint) and e.xid < b.horizon ${scope}
    order by e.xid, e.id
    limit $3)
  select e.*, null::boolean as held, null::boolean as stale from e
  union all
  select null, null, null, null, null, null, null,
    exists (select 1 from live_event e where (e.xid, e.id) > ($1::xid8, $2::bigint)
      and e.xid >= b.horizon and e.xid < pg_snapshot_xmax(h.s) ${scope}),
    $1::xid8 > pg_snapshot_xmax(h.s)
      or exists (select 1 from live_purged l where (l.xid, l.event_id) > ($1::xid8, $2::bigint))
  from h, b`;

const READ_ALL: Prepared = { name: 'live_read_all', text: readSql('') };
const READ_CONVERSATION: Prepared = {
  name: 'live_read_conversation',
  text: readSql('and e.conversation_id = $4::int'),
};
const READ_ACCOUNT: Prepared = { name: 'live_read_account', text: readSql('and e.account_id = $4::int') };

/** Where a stream starts that is to miss nothing committed from now: the horizon, as a position. */
const NOW: Prepared = {
  name: 'live_now',
  text: `with h as (select pg_current_snapshot() as s) select ${horizonOf('h.s')}::text || '.0' as position from h`,
};

/** Each account watched until $2 seconds from now at least (another process may hold it longer). */
const WATCH: Prepared = {
  name: 'live_watch',
  text: `insert into live_watch as w (account_id, until)
    select id, now() + make_interval(secs => $2::int) from unnest($1::int[]) as id
    on conflict (account_id) do update set until = greatest(w.until, excluded.until)`,
};

interface EventRow {
  position: string | null;
  kind: string | null;
  account_id: number | null;
  conversation_id: number | null;
  message_id: number | null;
  user_id: number | null;
  internal: boolean | null;
  held: boolean | null;
  stale: boolean | null;
}

export class PgLiveLog implements LiveLog {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async now(): Promise<string> {
    const [row] = await runPrepared<{ position: string }>(this.em, NOW, []);
    if (!row) throw new Error('live_now returned no row');
    return row.position;
  }

  async read(after: Position, scope: LiveScope | null, limit: number): Promise<LiveRead> {
    const at = [after.xid.toString(), after.id.toString(), limit];
    const rows = await runPrepared<EventRow>(
      this.em,
      ...((): [Prepared, unknown[]] => {
        if (scope === null) return [READ_ALL, at];
        if (scope.conversationId === null) return [READ_ACCOUNT, [...at, scope.accountId]];
        return [READ_CONVERSATION, [...at, scope.conversationId]];
      })(),
    );
    const events: LiveEvent[] = [];
    let held = false;
    let stale = false;
    for (const row of rows) {
      if (row.position === null) {
        held = row.held === true;
        stale = row.stale === true;
        continue;
      }
      if (row.kind === null || !isLiveEventKind(row.kind) || row.account_id === null) continue;
      events.push({
        position: row.position,
        kind: row.kind,
        accountId: row.account_id,
        conversationId: row.conversation_id,
        messageId: row.message_id,
        userId: row.user_id,
        internal: row.internal === true,
      });
    }
    return { events, held, stale };
  }

  async watch(accountIds: readonly number[], seconds: number): Promise<void> {
    if (accountIds.length > 0) await runPrepared(this.em, WATCH, [[...accountIds].sort((a, b) => a - b), seconds]);
  }
}

/** Deletes events past their retention, remembering the newest position deleted, and watches long over. */
export async function purgeLiveEvents(em: EntityManager): Promise<void> {
  await query(em, `delete from live_watch where until < now() - interval '1 hour'`);
  await query(
    em,
    `with gone as (
       delete from live_event where created_at < now() - make_interval(hours => ?) returning xid, id),
     last as (select xid, id from gone order by xid desc, id desc limit 1)
     insert into live_purged (one, xid, event_id) select true, xid, id from last
     on conflict (one) do update set xid = excluded.xid, event_id = excluded.event_id
       where (live_purged.xid, live_purged.event_id) < (excluded.xid, excluded.event_id)`,
    [LIVE_RETENTION_HOURS],
  );
}
