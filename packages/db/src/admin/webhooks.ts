import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from '../repositories/sql.ts';
import { AdminError } from './errors.ts';

/*
 * What operators do to an account's webhooks beyond what its API clients can (the CLI): parse an
 * event list, read an endpoint's attempts, send an event again. Subscribing, listing and removing
 * are the domain's use cases over PgWebhookEndpointStore, for the CLI and the API alike.
 */

export function parseEvents(list: string): WebhookEventType[] {
  const events = [
    ...new Set(
      list
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = events.filter((e) => !isWebhookEventType(e));
  if (events.length === 0 || unknown.length > 0) {
    throw new AdminError(`events must be a comma-separated list of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  }
  return events as WebhookEventType[];
}

/** The endpoint's last attempts, newest first: when, which event, the answer's status, the latency. */
export async function webhookAttempts(em: EntityManager, accountId: number, endpointId: number, limit = 20) {
  const rows = await query<{
    at: string;
    event_id: string;
    type: string;
    status: number | null;
    latency_ms: number;
    error: string | null;
    delivery_status: string;
  }>(
    em,
    `select a.at, d.event_id, e.type, a.status, a.latency_ms, a.error, d.status as delivery_status
     from webhook_attempt a join webhook_delivery d on d.id = a.delivery_id join webhook_event e on e.id = d.event_id
     where d.endpoint_id = ? and d.account_id = ? order by a.id desc limit ?`,
    [endpointId, accountId, limit],
  );
  return rows.map((r) => ({
    at: new Date(r.at).toISOString(),
    event: `evt_${r.event_id}`,
    type: r.type,
    status: r.status,
    latencyMs: r.latency_ms,
    error: r.error,
    delivery: r.delivery_status,
  }));
}

/** Sends an event again to each of its endpoints, from a fresh retry schedule. */
export async function redeliverEvent(em: EntityManager, accountId: number, eventId: number): Promise<number> {
  const rows = await query(
    em,
    `update webhook_delivery set status = 'pending', attempts = 0, next_attempt_at = now()
     where event_id = ? and account_id = ? returning id`,
    [eventId, accountId],
  );
  if (rows.length > 0) return rows.length;
  const queued = await query(em, `select 1 from webhook_event where id = ? and account_id = ? and not dispatched`, [
    eventId,
    accountId,
  ]);
  if (queued.length > 0) throw new AdminError(`event evt_${eventId} has not been sent yet: it is still queued`);
  throw new AdminError(`no deliveries of event evt_${eventId} in this account`);
}
