import type { WebhookEventType } from '@convo/domain';
import { type RawBuilder, sql } from 'kysely';
import { column, db, rowsOf } from './query.ts';

/*
 * The transactional outbox of webhooks. An event is written by the same statement (or transaction)
 * as the row it announces, so a create that is acknowledged has its event and one that fails has
 * none. It is written only when the account has an endpoint subscribed to its type, so an account
 * without endpoints writes nothing more than before; and it is the only row written: the workers
 * fan it out into one delivery per subscribed endpoint (PgWebhookDeliveryStore.dispatch), off the
 * request's path. Measured with pgbench on the create statement, writing the deliveries here too
 * cost a fifth of create's throughput; the event alone costs a few per cent.
 */

/** One event of a row of the source: its type, and the conversation and message it names. */
export interface EventOf {
  type: WebhookEventType;
  conversation: RawBuilder<number>;
  message: RawBuilder<number | null>;
}

/** Whether `account` has an endpoint subscribed to events of `type`. */
const subscribed = (account: RawBuilder<number>, type: RawBuilder<string>) =>
  db
    .selectFrom('webhook_endpoint as w')
    .select(sql<number>`1`.as('one'))
    .where('w.account_id', '=', account)
    .where('w.disabled_at', 'is', null)
    .where(sql<boolean>`${type} = any(w.events)`);

/**
 * The insert of a `with` (named `webhook_ev`) that records `events` for each row of `source`: one
 * event, in the rows' conversation and message order (many rows at once keep their order); more,
 * in the order `events` gives for each conversation. `account` and the events' members are SQL expressions (a slot, or
 * a column of `source`).
 */
export function webhookEvents(source: string, account: RawBuilder<number>, ...events: [EventOf, ...EventOf[]]) {
  const insert = db.insertInto('webhook_event').columns(['account_id', 'type', 'conversation_id', 'message_id']);
  const [only] = events;
  if (events.length === 1) {
    return insert.expression(
      rowsOf(source)
        .select([
          account.as('account_id'),
          sql.lit(only.type).as('type'),
          only.conversation.as('conversation_id'),
          only.message.as('message_id'),
        ])
        .where((eb) => eb.exists(subscribed(account, sql.lit(only.type))))
        .orderBy(only.conversation)
        .orderBy(only.message),
    );
  }
  const each = events.map((e, n) => sql`(${sql.lit(n)}, ${sql.lit(e.type)}, ${e.conversation}, ${e.message})`);
  return insert.expression(
    rowsOf(source)
      .crossJoinLateral(
        sql<{
          n: number;
          type: string;
          conversation_id: number;
          message_id: number | null;
        }>`(values ${sql.join(each)})`.as<'e'>(sql`e(n, type, conversation_id, message_id)`),
      )
      .select([
        account.as('account_id'),
        column<string>('e.type').as('type'),
        column<number>('e.conversation_id').as('conversation_id'),
        column<number | null>('e.message_id').as('message_id'),
      ])
      .where((eb) => eb.exists(subscribed(account, column<string>('e.type'))))
      .orderBy(column('e.conversation_id'))
      .orderBy(column('e.n')),
  );
}
