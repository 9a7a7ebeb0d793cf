import type { HiddenMessage, ModerationStore } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { markChangeSql } from './change-marks.ts';
import { query } from './sql.ts';
import { emitEventSql } from './webhook-outbox.ts';

/*
 * Hiding, showing again and deleting a message: each one statement with the account's change mark
 * (and, for hiding, the message_hidden event), moved only when the message changed.
 */

const HIDE = `
  with changed as (
    update message set hidden_at = now(), hidden_by = ?
    where account_id = ? and conversation_id = ? and id = ? and hidden_at is null
    returning id, account_id, conversation_id
  ),
  ${emitEventSql({ source: 'changed', type: 'message_hidden', account: 'changed.account_id', conversation: 'changed.conversation_id', message: 'changed.id' })},
  ${markChangeSql({ source: 'changed', account: '(select account_id from changed limit 1)' })}
  select count(*)::int as n from changed`;

const SHOW = `
  with changed as (
    update message set hidden_at = null, hidden_by = null
    where account_id = ? and conversation_id = ? and id = ? and hidden_at is not null
    returning id, account_id
  ),
  ${markChangeSql({ source: 'changed', account: '(select account_id from changed limit 1)' })}
  select count(*)::int as n from changed`;

/**
 * The author's own message, while it is younger than the window; with its recording's key when no
 * other message holds it (a workflow step may post the same recording again).
 */
const DELETE_OWN = `
  with gone as (
    delete from message
    where account_id = ? and conversation_id = ? and id = ? and author_id = ?
      and created_at > now() - make_interval(secs => ?::float8)
    returning id, account_id, media_key
  ),
  ${markChangeSql({ source: 'gone', account: '(select account_id from gone limit 1)' })}
  select case when not exists (select 1 from message m where m.media_key = gone.media_key and m.id <> gone.id)
    then media_key end as media_key
  from gone`;

const count = (rows: { n: number }[]) => rows[0]?.n ?? 0;

export class PgModerationStore implements ModerationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async hide(accountId: number, conversationId: number, messageId: number, by: number): Promise<boolean> {
    return count(await query(this.em, HIDE, [by, accountId, conversationId, messageId])) > 0;
  }

  async show(accountId: number, conversationId: number, messageId: number): Promise<boolean> {
    return count(await query(this.em, SHOW, [accountId, conversationId, messageId])) > 0;
  }

  async deleteOwn(
    accountId: number,
    conversationId: number,
    messageId: number,
    authorId: number,
    windowSeconds: number,
  ): Promise<{ mediaKey: string | null } | null> {
    const [gone] = await query<{ media_key: string | null }>(this.em, DELETE_OWN, [
      accountId,
      conversationId,
      messageId,
      authorId,
      windowSeconds,
    ]);
    return gone ? { mediaKey: gone.media_key } : null;
  }

  async hidden(accountId: number, conversationId: number): Promise<HiddenMessage[]> {
    const rows = await query<{ id: number; author_name: string | null; text: string }>(
      this.em,
      `select m.id, u.name as author_name, m.text from message m left join account_user u on u.id = m.author_id
       where m.account_id = ? and m.conversation_id = ? and m.hidden_at is not null
       order by m.created_at, m.id limit 100`,
      [accountId, conversationId],
    );
    return rows.map((r) => ({ id: r.id, authorName: r.author_name, text: r.text }));
  }
}
