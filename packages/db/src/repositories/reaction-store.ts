import {
  isReactionName,
  type KeptReaction,
  type NewReaction,
  REACTION_NAMES,
  type ReactionStore,
  reactionEmoji,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { authorJson } from './conversation-reads.ts';
import { db, isoTime, run, slot, statement } from './query.ts';

/*
 * Reactions (the domain's messages/reactions.ts). Adding one is one statement: the row (once per
 * message, kind and reactor), and with it, when the account subscribed, the `reaction_added`
 * webhook event with its body as sent, and for a message with an author, the notify_event that
 * tells them in their mail digest; the row's trigger writes the live feed (taking one back too).
 * Only a message of the account that is shown (not hidden) takes one.
 */

/** The message reacted on, when the account has it shown. */
const shownMessage = () =>
  db
    .selectFrom('message')
    .select(['id', 'account_id', 'conversation_id', 'author_id'])
    .where('id', '=', slot<number>('message'))
    .where('account_id', '=', slot<number>('account'))
    .where('hidden_at', 'is', null);

const ADD = statement(
  'message_reaction_add',
  db
    .with('target', () => shownMessage())
    .with('added', (q) =>
      q
        .insertInto('message_reaction')
        .columns(['account_id', 'conversation_id', 'message_id', 'reaction', 'user_id', 'reactor_key'])
        .expression(
          q
            .selectFrom('target as t')
            .select([
              't.account_id',
              't.conversation_id',
              't.id',
              sql<string>`${slot('reaction')}::text`.as('reaction'),
              sql<number | null>`${slot('user')}::int`.as('user_id'),
              sql<string>`${slot('reactor')}::text`.as('reactor_key'),
            ]),
        )
        .onConflict((c) => c.columns(['message_id', 'reaction', 'reactor_key']).doNothing())
        .returning(['id', 'conversation_id', 'message_id', 'reaction', 'user_id', 'created_at']),
    )
    .with('webhook_ev', (q) =>
      q
        .insertInto('webhook_event')
        .columns(['account_id', 'type', 'conversation_id', 'message_id', 'payload'])
        .expression(
          q
            .selectFrom('added as r')
            .leftJoin('account_user as u', 'u.id', 'r.user_id')
            .select([
              sql<number>`${slot('account')}::int`.as('account_id'),
              sql.lit('reaction_added').as('type'),
              'r.conversation_id',
              'r.message_id',
              sql<string>`to_jsonb(concat('{"type":"reaction_added","timestamp":"', ${isoTime('r.created_at')},
              '","data":{"message_id":', r.message_id, ',"conversation_id":', r.conversation_id,
              ',"reaction":"', r.reaction, '","emoji":', to_json(${slot('emoji')}::text)::text,
              ',"user":', ${authorJson('u', sql<boolean>`false`)}, ',"created_at":"', ${isoTime('r.created_at')}, '"}}'))`.as(
                'payload',
              ),
            ])
            .where(
              sql<boolean>`exists (select 1 from webhook_endpoint w where w.account_id = ${slot('account')}::int
              and w.disabled_at is null and 'reaction_added' = any(w.events))`,
            ),
        ),
    )
    // The author hears of it in their digest (the notifier decides whether they want to).
    .with('notify_ev', (q) =>
      q
        .insertInto('notify_event')
        .columns(['account_id', 'conversation_id', 'message_id', 'author_id', 'reaction_id'])
        .expression(
          q
            .selectFrom('added as r')
            .innerJoin('target as t', 't.id', 'r.message_id')
            .select(['t.account_id', 't.conversation_id', 't.id', 'r.user_id', 'r.id'])
            .where('t.author_id', 'is not', null),
        ),
    )
    .selectFrom('target')
    .select([sql<number>`count(*)::int`.as('found'), sql<number>`(select count(*) from added)::int`.as('added')]),
);

const REMOVE = statement(
  'message_reaction_remove',
  db
    .with('target', () => shownMessage())
    .with('removed', (q) =>
      q
        .deleteFrom('message_reaction')
        .where('message_id', 'in', q.selectFrom('target').select('id'))
        .where('reaction', '=', slot<string>('reaction'))
        .where('reactor_key', '=', slot<string>('reactor'))
        .returning('id'),
    )
    .selectFrom('target')
    .select([sql<number>`count(*)::int`.as('found'), sql<number>`(select count(*) from removed)::int`.as('removed')]),
);

/** Per message and kind: how many, whether the reader's key is among them, the people by when they reacted. */
const SUMMARIES = statement(
  'message_reaction_summaries',
  db
    .selectFrom('message_reaction as r')
    .leftJoin('account_user as u', 'u.id', 'r.user_id')
    .select([
      'r.message_id',
      'r.reaction',
      sql<number>`count(*)::int`.as('n'),
      sql<boolean>`bool_or(r.reactor_key = ${slot('reactor')}::text)`.as('mine'),
      sql<
        { id: number; email: string; name: string }[]
      >`coalesce(json_agg(json_build_object('id', u.id, 'email', u.email,
        'name', u.name) order by r.id) filter (where u.id is not null), '[]'::json)`.as('users'),
    ])
    .where('r.account_id', '=', slot<number>('account'))
    .where(sql<boolean>`r.message_id = any(${slot('messages')}::int[])`)
    .groupBy(['r.message_id', 'r.reaction']),
);

export class PgReactionStore implements ReactionStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(r: NewReaction): Promise<'added' | 'kept' | 'missing'> {
    const [row] = await run(this.em, ADD, {
      account: r.accountId,
      message: r.messageId,
      reaction: r.reaction,
      emoji: reactionEmoji(r.reaction),
      user: r.userId,
      reactor: r.reactorKey,
    });
    if (!row || row.found === 0) return 'missing';
    return row.added > 0 ? 'added' : 'kept';
  }

  async remove(r: Omit<NewReaction, 'userId'>): Promise<'removed' | 'none' | 'missing'> {
    const [row] = await run(this.em, REMOVE, {
      account: r.accountId,
      message: r.messageId,
      reaction: r.reaction,
      reactor: r.reactorKey,
    });
    if (!row || row.found === 0) return 'missing';
    return row.removed > 0 ? 'removed' : 'none';
  }

  async summaries(
    accountId: number,
    messageIds: readonly number[],
    reactorKey: string,
  ): Promise<Map<number, KeptReaction[]>> {
    const found = new Map<number, KeptReaction[]>();
    if (messageIds.length === 0) return found;
    const rows = await run(this.em, SUMMARIES, { account: accountId, messages: messageIds, reactor: reactorKey });
    for (const row of rows) {
      if (!isReactionName(row.reaction)) continue;
      const list = found.get(row.message_id) ?? [];
      list.push({ reaction: row.reaction, count: row.n, mine: row.mine === true, users: row.users });
      found.set(row.message_id, list);
    }
    for (const list of found.values())
      list.sort((a, b) => REACTION_NAMES.indexOf(a.reaction) - REACTION_NAMES.indexOf(b.reaction));
    return found;
  }
}
