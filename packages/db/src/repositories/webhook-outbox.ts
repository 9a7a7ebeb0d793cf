import type { WebhookEventType } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from './sql.ts';

/*
 * The transactional outbox of webhooks. An event is written by the same statement (or transaction)
 * as the row it announces, so a create that is acknowledged has its event and one that fails has
 * none; with it, one delivery per endpoint of the account subscribed to that type. An account
 * without endpoints writes nothing more than before.
 */

/**
 * CTEs (to follow others in a `with`) that record an event of `type` for each row of `source` (in
 * conversation and message order, so many rows at once keep their order) and a delivery for each
 * subscribed endpoint. `account`, `conversation` and `message` are SQL
 * expressions (a parameter, or a column of `source`).
 */
export function emitEventSql(o: {
  source: string;
  type: WebhookEventType;
  account: string;
  conversation: string;
  message: string;
}): string {
  const subscribed = `w.account_id = ${o.account} and w.disabled_at is null and '${o.type}' = any(w.events)`;
  return `
  webhook_ev as (
    insert into webhook_event (account_id, type, conversation_id, message_id)
    select ${o.account}, '${o.type}', ${o.conversation}, ${o.message} from ${o.source}
    where exists (select 1 from webhook_endpoint w where ${subscribed})
    order by ${o.conversation}, ${o.message}
    returning id, account_id, type),
  webhook_dl as (
    insert into webhook_delivery (account_id, event_id, endpoint_id)
    select webhook_ev.account_id, webhook_ev.id, w.id from webhook_ev join webhook_endpoint w
      on w.account_id = webhook_ev.account_id and w.disabled_at is null and webhook_ev.type = any(w.events)
    order by webhook_ev.id, w.id)`;
}

/** The same, as a statement of its own inside a transaction (the Idempotency-Key create). */
export async function emitEventIn(
  tx: EntityManager,
  accountId: number,
  type: WebhookEventType,
  conversationId: number,
  messageId: number | null,
): Promise<void> {
  await query(
    tx,
    `with src as (select ?::int as account_id, ?::int as conversation_id, ?::int as message_id),
     ${emitEventSql({ source: 'src', type, account: 'src.account_id', conversation: 'src.conversation_id', message: 'src.message_id' })}
     select 1`,
    [accountId, conversationId, messageId],
  );
}
