import type { NewPlay, PlayRecord, PlayStore, PlaySummary } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { authorJson } from './conversation-reads.ts';
import { db, isoTime, run, slot, statement } from './query.ts';

/*
 * Played receipts (the domain's messages/plays.ts). Plays are kept in batches (the domain's
 * PlayBuffer), a batch in one statement: the rows (once per message and session, of recordings
 * the account still keeps and shows), and with them, when the account subscribed, each one's
 * `message_played` webhook event with its body as it is sent; for a message's first play in a
 * conversation with a workflow, its workflow event; for a message with an author, the
 * notify_event that tells them in their mail digest; the rows' trigger writes the live feed. No
 * change mark moves: nothing a conditional answer holds changes.
 */

const RECORD = statement(
  'message_play_record',
  db
    .with('reported', (q) =>
      q
        .selectFrom(
          sql<{ account_id: number; message_id: number; viewer_id: number | null; session_key: string }>`(select *
            from unnest(${slot('accounts')}::int[], ${slot('messages')}::int[], ${slot('viewers')}::int[],
              ${slot('sessions')}::text[]) as t(account_id, message_id, viewer_id, session_key))`.as('r'),
        )
        .innerJoin('message as m', (j) =>
          j.onRef('m.id', '=', 'r.message_id').onRef('m.account_id', '=', 'r.account_id'),
        )
        .select(['r.account_id', 'm.conversation_id', 'r.message_id', 'r.viewer_id', 'r.session_key'])
        .where('m.hidden_at', 'is', null)
        .where('m.media_key', 'is not', null),
    )
    .with('played', (q) =>
      q
        .insertInto('message_play')
        .columns(['account_id', 'conversation_id', 'message_id', 'viewer_id', 'session_key'])
        .expression(q.selectFrom('reported').selectAll())
        .onConflict((c) => c.columns(['message_id', 'session_key']).doNothing())
        .returning(['id', 'account_id', 'conversation_id', 'message_id', 'viewer_id', 'played_at']),
    )
    .with('webhook_ev', (q) =>
      q
        .insertInto('webhook_event')
        .columns(['account_id', 'type', 'conversation_id', 'message_id', 'payload'])
        .expression(
          q
            .selectFrom('played as p')
            .leftJoin('account_user as u', 'u.id', 'p.viewer_id')
            .select([
              'p.account_id',
              sql.lit('message_played').as('type'),
              'p.conversation_id',
              'p.message_id',
              sql<string>`to_jsonb(concat('{"type":"message_played","timestamp":"', ${isoTime('p.played_at')},
              '","data":{"message_id":', p.message_id, ',"conversation_id":', p.conversation_id,
              ',"viewer":', ${authorJson('u', sql<boolean>`false`)}, ',"played_at":"', ${isoTime('p.played_at')}, '"}}'))`.as(
                'payload',
              ),
            ])
            .where(
              sql<boolean>`exists (select 1 from webhook_endpoint w where w.account_id = p.account_id
              and w.disabled_at is null and 'message_played' = any(w.events))`,
            ),
        ),
    )
    // The author hears of it in their digest (the notifier decides whether they want to).
    .with('notify_ev', (q) =>
      q
        .insertInto('notify_event')
        .columns(['account_id', 'conversation_id', 'message_id', 'author_id', 'play_id'])
        .expression(
          q
            .selectFrom('played as p')
            .innerJoin('message as m', 'm.id', 'p.message_id')
            .select(['m.account_id', 'm.conversation_id', 'm.id', 'p.viewer_id', 'p.id'])
            .where('m.author_id', 'is not', null),
        ),
    )
    // The conversation's workflow hears of a message's first play (message.played steps): the
    // first of the batch, where none was kept before it (the statement does not see its own rows).
    .with('workflow_ev', (q) =>
      q
        .insertInto('workflow_event')
        .columns(['account_id', 'conversation_id', 'message_id', 'author_id', 'played'])
        .expression(
          q
            .selectFrom('played as p')
            .innerJoin('message as m', 'm.id', 'p.message_id')
            .innerJoin('conversation as c', 'c.id', 'm.conversation_id')
            .distinctOn('m.id')
            .select(['c.account_id', 'c.id', 'm.id', 'm.author_id', sql<boolean>`true`.as('played')])
            .where('c.workflow', 'is not', null)
            .where(sql<boolean>`not exists (select 1 from message_play o where o.message_id = m.id)`)
            .orderBy('m.id')
            .orderBy('p.id'),
        ),
    )
    .selectFrom('played')
    .select(sql<number>`count(*)::int`.as('n')),
);

/** Per message: the named viewers by their first play (once each), and the sessions nobody signed in to. */
const SUMMARIES = statement(
  'message_play_summaries',
  db
    .selectFrom((q) =>
      q
        .selectFrom('message_play')
        .select(['message_id', 'viewer_id', sql<number>`min(id)`.as('first'), sql<number>`count(*)::int`.as('n')])
        .where('account_id', '=', slot<number>('account'))
        .where(sql<boolean>`message_id = any(${slot('messages')}::int[])`)
        .groupBy(['message_id', 'viewer_id'])
        .as('f'),
    )
    .leftJoin('account_user as u', 'u.id', 'f.viewer_id')
    .select([
      'f.message_id',
      sql<string[]>`coalesce(array_agg(coalesce(nullif(u.name, ''), 'someone') order by f.first)
        filter (where u.id is not null), '{}')`.as('names'),
      sql<number>`coalesce(sum(f.n) filter (where u.id is null), 0)::int`.as('visitors'),
    ])
    .groupBy('f.message_id'),
);

const LOG = statement(
  'message_play_log',
  db
    .selectFrom('message as m')
    .leftJoin('message_play as mp', 'mp.message_id', 'm.id')
    .leftJoin('account_user as u', 'u.id', 'mp.viewer_id')
    .select(['mp.id', 'mp.played_at', 'u.id as user_id', 'u.name', 'u.email'])
    .where('m.account_id', '=', slot<number>('account'))
    .where('m.id', '=', slot<number>('message'))
    .where('m.hidden_at', 'is', null)
    .orderBy('mp.id'),
);

export class PgPlayStore implements PlayStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async record(plays: readonly NewPlay[]): Promise<number> {
    if (plays.length === 0) return 0;
    const [row] = await run(this.em, RECORD, {
      accounts: plays.map((p) => p.accountId),
      messages: plays.map((p) => p.messageId),
      viewers: plays.map((p) => p.viewerId),
      sessions: plays.map((p) => p.sessionKey),
    });
    return row?.n ?? 0;
  }

  async summaries(accountId: number, messageIds: readonly number[]): Promise<Map<number, PlaySummary>> {
    const rows = await run(this.em, SUMMARIES, { account: accountId, messages: messageIds });
    return new Map(rows.map((r) => [r.message_id, { names: r.names, visitors: r.visitors }]));
  }

  async log(accountId: number, messageId: number): Promise<PlayRecord[] | null> {
    const rows = await run(this.em, LOG, { account: accountId, message: messageId });
    if (rows.length === 0) return null;
    return rows
      .filter((r) => r.id !== null && r.played_at !== null)
      .map((r) => ({
        viewer:
          r.user_id === null
            ? { anonymous: true as const }
            : { anonymous: false as const, id: r.user_id, name: r.name ?? '', email: r.email ?? '' },
        playedAt: new Date(r.played_at ?? 0),
      }));
  }
}
