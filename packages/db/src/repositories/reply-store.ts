import type { ReplyStore, StoredMedia } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { markChangeSql } from './change-marks.ts';
import { notifySql } from './notification-store.ts';
import { type Prepared, runPrepared } from './prepared.ts';
import { emitEventSql } from './webhook-outbox.ts';
import { workflowEventSql } from './workflow-jobs.ts';

/**
 * A reply is a message (text, or a recording with its caption), written by one prepared statement with its webhook event, the
 * event its notifications are made from (notifications.ts) and, in a conversation with a workflow,
 * the event its steps are planned from (workflow-jobs.ts), whatever the number of members; a
 * registered author joins the conversation's members in the same statement (the domain's rule,
 * access.ts), which the change mark already counts. Its form token (submit_key) is
 * unique per account, so the same form sent twice (a double click, a retry after a lost answer)
 * finds the first message and posts once. $1 account, $2 conversation, $3 author or null,
 * $4 text, $5 form token or null; a recording's $6 kind ('text' without one), $7 measured
 * seconds, $8 store key, $9 content type, $10 size in bytes.
 */
const INSERT: Prepared = {
  name: 'reply_insert',
  text: `
  with added as (
    insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, author_id, anonymous, text, submit_key,
                         media_key, media_content_type, media_bytes)
    select c.account_id, c.id, $6::varchar, $7::int, $3::int, $3::int is null, $4::text, $5::varchar,
           $8::varchar, $9::varchar, $10::bigint
    from conversation c where c.id = $2 and c.account_id = $1
    on conflict (account_id, submit_key) where submit_key is not null do nothing
    returning id, conversation_id
  ),
  touched as (
    update conversation set last_activity_at = now()
    where id = $2 and account_id = $1 and exists (select 1 from added)
  ),
  joined as (
    insert into conversation_member (conversation_id, user_id, account_id)
    select conversation_id, $3::int, $1::int from added where $3::int is not null
    on conflict do nothing
  ),
  ${emitEventSql({ source: 'added', type: 'message_created', account: '$1::int', conversation: 'added.conversation_id', message: 'added.id' })},
  ${notifySql({ source: 'added', account: '$1::int', conversation: 'added.conversation_id', message: 'added.id', author: '$3::int' })},
  ${markChangeSql({ source: 'added', account: '$1::int' })},
  ${workflowEventSql({
    source: 'added',
    account: '$1::int',
    conversation: 'added.conversation_id',
    message: 'added.id',
    author: '$3::int',
    when: 'exists (select 1 from conversation c where c.id = added.conversation_id and c.workflow is not null)',
  })}
  select id, true as created from added
  union all
  select id, false from message where account_id = $1 and submit_key = $5::varchar and not exists (select 1 from added)`,
};

/**
 * An unconfirmed start's message gets its author (the address's person, who confirmed), who joins
 * the conversation's members; the change mark moves with it. $1 account, $2 message, $3 person.
 */
const CLAIM: Prepared = {
  name: 'reply_claim',
  text: `
  with claimed as (
    update message set author_id = $3, anonymous = false, claimed_name = null
    where account_id = $1 and id = $2 and author_id is null and claimed_name is not null
    returning id, conversation_id
  ),
  joined as (
    insert into conversation_member (conversation_id, user_id, account_id)
    select conversation_id, $3::int, $1::int from claimed
    on conflict do nothing
  ),
  ${markChangeSql({ source: 'claimed', account: '$1::int' })}
  select id from claimed`,
};

/** A form token's message in a conversation ($1 account, $2 conversation, $3 form token). */
const POSTED: Prepared = {
  name: 'reply_posted',
  text: 'select id from message where account_id = $1 and submit_key = $3 and conversation_id = $2',
};

export class PgReplyStore implements ReplyStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async insert(
    accountId: number,
    conversationId: number,
    reply: { authorId: number | null; text: string; submitKey: string | null; media?: StoredMedia | undefined },
  ): Promise<{ id: number; created: boolean }> {
    const media = reply.media;
    const [row] = await runPrepared<{ id: number; created: boolean }>(this.em, INSERT, [
      accountId,
      conversationId,
      reply.authorId,
      reply.text,
      reply.submitKey,
      media?.kind ?? 'text',
      media?.seconds ?? 0,
      media?.key ?? null,
      media?.contentType ?? null,
      media?.bytes ?? null,
    ]);
    if (!row) throw new Error(`conversation ${conversationId} of account ${accountId} is gone`);
    return { id: Number(row.id), created: row.created };
  }

  async posted(accountId: number, conversationId: number, submitKey: string): Promise<{ id: number } | null> {
    const [row] = await runPrepared<{ id: number }>(this.em, POSTED, [accountId, conversationId, submitKey]);
    return row ? { id: Number(row.id) } : null;
  }

  async claim(accountId: number, messageId: number, authorId: number): Promise<{ id: number } | null> {
    const [row] = await runPrepared<{ id: number }>(this.em, CLAIM, [accountId, messageId, authorId]);
    return row ? { id: Number(row.id) } : null;
  }
}
