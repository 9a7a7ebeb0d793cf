import type { ReplyStore } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from './sql.ts';

/**
 * A reply is a text message. Its form token (submit_key) is unique per account, so the same form
 * sent twice (a double click, a retry after a lost answer) finds the first message and posts once.
 */
const INSERT = `
  with added as (
    insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, author_id, anonymous, text, submit_key)
    select c.account_id, c.id, 'text', 0, ?::int, ?::int is null, ?, ?::varchar
    from conversation c where c.id = ? and c.account_id = ?
    on conflict (account_id, submit_key) where submit_key is not null do nothing
    returning id
  )
  select id from added
  union all
  select id from message where account_id = ? and submit_key = ?::varchar and not exists (select 1 from added)`;

export class MikroReplyStore implements ReplyStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async insert(
    accountId: number,
    conversationId: number,
    reply: { authorId: number | null; text: string; submitKey: string | null },
  ): Promise<{ id: number }> {
    const [row] = await query<{ id: number }>(this.em, INSERT, [
      reply.authorId,
      reply.authorId,
      reply.text,
      reply.submitKey,
      conversationId,
      accountId,
      accountId,
      reply.submitKey,
    ]);
    if (!row) throw new Error(`conversation ${conversationId} of account ${accountId} is gone`);
    return { id: Number(row.id) };
  }
}
