import type { WebhookEventType } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from './sql.ts';

/*
 * The transactional outbox of webhooks. An event is written by the same statement (or transaction)
 * as the row it announces, so a create that is acknowledged has its event and one that fails has
 * none. It is written only when the account has an endpoint subscribed to its type, so an account
 * without endpoints writes nothing more than before; and it is the only row written: the workers
 * fan it out into one delivery per subscribed endpoint (PgWebhookDeliveryStore.dispatch), off the
 * request's path. Measured with pgbench on the create statement, writing the deliveries here too
 * cost a fifth of create's throughput; the event alone costs a few per cent.
 */

/**
 * A CTE (to follow others in a `with`) that records an event of `type` for each row of `source`
 * (in conversation and message order, so many rows at once keep their order). `account`,
 * `conversation` and `message` are SQL expressions (a parameter, or a column of `source`).
 */
export function emitEventSql(event: {
  source: string;
  type: WebhookEventType;
  account: string;
  conversation: string;
  message: string;
}): string {
  const subscribed = `w.account_id = ${event.account} and w.disabled_at is null and '${event.type}' = any(w.events)`;
  return `
  webhook_ev as (
    insert into webhook_event (account_id, type, conversation_id, message_id)
    select ${event.account}, '${event.type}', ${event.conversation}, ${event.message} from ${event.source}
    where exists (select 1 from webhook_endpoint w where ${subscribed})
    order by ${event.conversation}, ${event.message})`;
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
