import {
  type AccountAddress,
  type ConversationRecord,
  conversationCreatedPayload,
  messageCreatedPayload,
  WEBHOOK_DISABLE_AFTER_SECONDS,
  type WebhookEnvelope,
  type WebhookEventType,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { conversationColumns, type Row, recordFromRow } from './conversation-reads.ts';
import { runPrepared } from './prepared.ts';
import { MikroSiteStore } from './site-store.ts';
import { query } from './sql.ts';

/** A delivery a worker took, with what sending it needs. */
export interface DueDelivery {
  id: number;
  attempts: number;
  eventId: number;
  type: WebhookEventType;
  url: string;
  secret: string;
  endpointId: number;
  /** The event's body, rendered once at its first attempt and the same on every retry. */
  body: string;
}

const CONVERSATION_BY_ID = {
  name: 'webhook_conversation_by_id',
  text: `select ${conversationColumns(false)} from conversation c where c.account_id = $1 and c.id = $2`,
};

/** The deliveries table, as the webhook workers of every replica share it. */
export class MikroWebhookStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /**
   * Takes up to `limit` due deliveries, oldest first; SKIP LOCKED keeps two workers (in any
   * replicas) off the same rows, and the lease (next attempt moved `leaseSeconds` out, longer than
   * an attempt may take) hands a delivery whose worker died to another.
   */
  async claimDue(limit: number, leaseSeconds: number): Promise<DueDelivery[]> {
    const rows = await query<{
      id: string;
      attempts: number;
      event_id: string;
      type: WebhookEventType;
      url: string;
      secret: string;
      endpoint_id: number;
      payload: unknown;
      account_id: number;
      conversation_id: number;
      message_id: number | null;
      created_at: string;
      key: string;
      host: string;
    }>(
      this.em,
      `with taken as (
         update webhook_delivery d set attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ?)
         where d.id in (select id from webhook_delivery where status = 'pending' and next_attempt_at <= now()
                        order by id limit ? for update skip locked)
         returning d.id, d.attempts, d.event_id, d.endpoint_id)
       select t.id, t.attempts, t.event_id, e.type, w.url, w.secret, t.endpoint_id, e.payload, e.account_id,
              e.conversation_id, e.message_id, e.created_at, a.key, a.host
       from taken t join webhook_event e on e.id = t.event_id join webhook_endpoint w on w.id = t.endpoint_id
       join account a on a.id = e.account_id
       order by t.id`,
      [leaseSeconds, limit],
    );
    const due: DueDelivery[] = [];
    for (const r of rows) {
      const payload = r.payload ?? (await this.render(r));
      due.push({
        id: Number(r.id),
        attempts: r.attempts,
        eventId: Number(r.event_id),
        type: r.type,
        url: r.url,
        secret: r.secret,
        endpointId: r.endpoint_id,
        body: typeof payload === 'string' ? payload : JSON.stringify(payload),
      });
    }
    return due;
  }

  /** The event's body, from the rows as they are at its first attempt; stored, so retries send it unchanged. */
  private async render(r: {
    event_id: string;
    type: WebhookEventType;
    account_id: number;
    conversation_id: number;
    message_id: number | null;
    created_at: string;
    key: string;
    host: string;
  }): Promise<unknown> {
    const account: AccountAddress = { key: r.key, host: r.host };
    const at = new Date(r.created_at);
    let envelope: WebhookEnvelope | null = null;
    if (r.type === 'conversation_created') {
      const [row] = await runPrepared<Row>(this.em, CONVERSATION_BY_ID, [r.account_id, r.conversation_id]);
      const record: ConversationRecord | null = row ? recordFromRow(row) : null;
      if (record) envelope = conversationCreatedPayload(account, record, at);
    } else if (r.message_id !== null) {
      const found = await new MikroSiteStore(this.em).messageById(r.account_id, r.message_id);
      if (found) envelope = messageCreatedPayload(account, found.conversation, found.message, at);
    }
    // The row is gone (deleted since): the event still says what happened, with its ids.
    envelope ??= {
      type: r.type,
      timestamp: at.toISOString(),
      data: { conversation: { id: r.conversation_id }, ...(r.message_id ? { message: { id: r.message_id } } : {}) },
    };
    const [stored] = await query<{ payload: unknown }>(
      this.em,
      'update webhook_event set payload = coalesce(payload, ?::jsonb) where id = ? returning payload',
      [JSON.stringify(envelope), r.event_id],
    );
    return stored?.payload ?? envelope;
  }

  /** Records an attempt; a success ends the delivery and clears its endpoint's failing streak. */
  async delivered(d: DueDelivery, status: number, latencyMs: number): Promise<void> {
    await query(
      this.em,
      // Only the claim this worker holds: a redelivery queued meanwhile (attempts reset) stays queued.
      `with a as (insert into webhook_attempt (delivery_id, status, latency_ms) values (?, ?, ?))
       update webhook_delivery set status = 'delivered', delivered_at = now(), last_status = ?, last_error = null
       where id = ? and attempts = ?`,
      [d.id, status, latencyMs, status, d.id, d.attempts],
    );
    await query(
      this.em,
      'update webhook_endpoint set failing_since = null where id = ? and failing_since is not null',
      [d.endpointId],
    );
  }

  /**
   * Records a failed attempt: the next one after `retryInSeconds`, or none (failed). An endpoint that
   * has failed every attempt for three days is disabled.
   */
  async failedAttempt(
    d: DueDelivery,
    o: { status: number | null; error: string; latencyMs: number; retryInSeconds: number | null },
  ): Promise<void> {
    await query(
      this.em,
      `with a as (insert into webhook_attempt (delivery_id, status, latency_ms, error) values (?, ?, ?, ?))
       update webhook_delivery set last_status = ?, last_error = ?,
         status = case when ?::int is null then 'failed' else 'pending' end,
         next_attempt_at = case when ?::int is null then next_attempt_at else now() + make_interval(secs => ?::int) end
       where id = ? and attempts = ?`,
      [
        d.id,
        o.status,
        o.latencyMs,
        o.error.slice(0, 500),
        o.status,
        o.error.slice(0, 500),
        o.retryInSeconds,
        o.retryInSeconds,
        o.retryInSeconds ?? 0,
        d.id,
        d.attempts,
      ],
    );
    await query(
      this.em,
      `update webhook_endpoint set failing_since = coalesce(failing_since, now()),
         disabled_at = case when failing_since < now() - make_interval(secs => ?) then now() else disabled_at end
       where id = ?`,
      [WEBHOOK_DISABLE_AFTER_SECONDS, d.endpointId],
    );
  }

  /** Figures for /metrics: deliveries waiting, and the age of the oldest. */
  async queueStats(): Promise<{ pending: number; oldestSeconds: number }> {
    const [row] = await query<{ pending: number; oldest: number | null }>(
      this.em,
      `select count(*)::int as pending, extract(epoch from now() - min(created_at))::float8 as oldest
       from webhook_delivery where status = 'pending'`,
    );
    return { pending: row?.pending ?? 0, oldestSeconds: row?.oldest ?? 0 };
  }
}
