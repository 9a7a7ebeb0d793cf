import type { HiddenMessage, ModerationStore } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type RawBuilder, sql } from 'kysely';
import { changeMark } from './change-marks.ts';
import { column, db, run, slot, statement } from './query.ts';
import { saidOf } from './said.ts';
import { webhookEvents } from './webhook-outbox.ts';

/*
 * Hiding, showing again and deleting a message: each one statement with the account's change mark
 * (and, for hiding, the message_hidden event), moved only when the message changed.
 */

/**
 * The conversation of the changed message says again what its visible messages say, `shown`
 * naming them as they are after the change (the statement's other parts see them as before).
 */
const resaid = (source: string, shown: RawBuilder<boolean>) =>
  db
    .updateTable('conversation')
    .set({ said: saidOf(sql<number>`conversation.id`, shown) })
    .where('id', 'in', sql<number>`(select conversation_id from ${sql.table(source)})`);

/** The account of the rows of `source` (all of one account). */
const accountOf = (source: string) => sql<number>`(select account_id from ${sql.table(source)} limit 1)`;

const HIDE = statement(
  'message_hide',
  db
    .with('changed', (q) =>
      q
        .updateTable('message')
        .set({ hidden_at: sql<Date>`now()`, hidden_by: slot<number>('by') })
        .where('account_id', '=', slot<number>('account'))
        .where('conversation_id', '=', slot<number>('conversation'))
        .where('id', '=', slot<number>('message'))
        .where('hidden_at', 'is', null)
        .returning(['id', 'account_id', 'conversation_id']),
    )
    .with('resaid', () => resaid('changed', sql<boolean>`m.hidden_at is null and m.id not in (select id from changed)`))
    .with('webhook_ev', () =>
      webhookEvents('changed', column('changed.account_id'), {
        type: 'message_hidden',
        conversation: column('changed.conversation_id'),
        message: column('changed.id'),
      }),
    )
    .with('change_mark', () => changeMark('changed', accountOf('changed')))
    .selectFrom('changed')
    .select(sql<number>`count(*)::int`.as('n')),
);

const SHOW = statement(
  'message_show',
  db
    .with('changed', (q) =>
      q
        .updateTable('message')
        .set({ hidden_at: null, hidden_by: null })
        .where('account_id', '=', slot<number>('account'))
        .where('conversation_id', '=', slot<number>('conversation'))
        .where('id', '=', slot<number>('message'))
        .where('hidden_at', 'is not', null)
        .returning(['id', 'account_id', 'conversation_id']),
    )
    .with('resaid', () => resaid('changed', sql<boolean>`(m.hidden_at is null or m.id in (select id from changed))`))
    .with('change_mark', () => changeMark('changed', accountOf('changed')))
    .selectFrom('changed')
    .select(sql<number>`count(*)::int`.as('n')),
);

/**
 * The author's own message, while it is younger than the window; with its recording's key when no
 * other message holds it (a workflow step may post the same recording again).
 */
const DELETE_OWN = statement(
  'message_delete_own',
  db
    .with('gone', (q) =>
      q
        .deleteFrom('message')
        .where('account_id', '=', slot<number>('account'))
        .where('conversation_id', '=', slot<number>('conversation'))
        .where('id', '=', slot<number>('message'))
        .where('author_id', '=', slot<number>('author'))
        .where('created_at', '>', sql<Date>`now() - make_interval(secs => ${slot('windowSeconds')}::float8)`)
        .returning(['id', 'account_id', 'conversation_id', 'media_key']),
    )
    // Its thread's replies stay, as messages of the conversation itself.
    .with('unthreaded', (q) =>
      q
        .updateTable('message')
        .set({ parent_id: null })
        .where('account_id', '=', slot<number>('account'))
        .where('conversation_id', '=', slot<number>('conversation'))
        .where('parent_id', 'in', q.selectFrom('gone').select('gone.id')),
    )
    .with('resaid', () => resaid('gone', sql<boolean>`m.hidden_at is null and m.id not in (select id from gone)`))
    .with('change_mark', () => changeMark('gone', accountOf('gone')))
    .selectFrom('gone')
    .select(
      sql<
        string | null
      >`case when not exists (select 1 from message m where m.media_key = gone.media_key and m.id <> gone.id)
        then gone.media_key end`.as('media_key'),
    ),
);

/** The conversation's hidden messages, oldest first (the team's page shows them to show again). */
const HIDDEN = statement(
  'messages_hidden',
  db
    .selectFrom('message as m')
    .leftJoin('account_user as u', 'u.id', 'm.author_id')
    .select(['m.id', 'u.name as author_name', 'm.text'])
    .where('m.account_id', '=', slot<number>('account'))
    .where('m.conversation_id', '=', slot<number>('conversation'))
    .where('m.hidden_at', 'is not', null)
    .orderBy('m.created_at')
    .orderBy('m.id')
    .limit(100),
);

const count = (rows: { n: number }[]) => rows[0]?.n ?? 0;

export class PgModerationStore implements ModerationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async hide(accountId: number, conversationId: number, messageId: number, by: number): Promise<boolean> {
    return (
      count(await run(this.em, HIDE, { account: accountId, conversation: conversationId, message: messageId, by })) > 0
    );
  }

  async show(accountId: number, conversationId: number, messageId: number): Promise<boolean> {
    return (
      count(await run(this.em, SHOW, { account: accountId, conversation: conversationId, message: messageId })) > 0
    );
  }

  async deleteOwn(
    accountId: number,
    conversationId: number,
    messageId: number,
    authorId: number,
    windowSeconds: number,
  ): Promise<{ mediaKey: string | null } | null> {
    const [gone] = await run(this.em, DELETE_OWN, {
      account: accountId,
      conversation: conversationId,
      message: messageId,
      author: authorId,
      windowSeconds,
    });
    return gone ? { mediaKey: gone.media_key } : null;
  }

  async hidden(accountId: number, conversationId: number): Promise<HiddenMessage[]> {
    const rows = await run(this.em, HIDDEN, { account: accountId, conversation: conversationId });
    return rows.map((r) => ({ id: r.id, authorName: r.author_name, text: r.text }));
  }
}
