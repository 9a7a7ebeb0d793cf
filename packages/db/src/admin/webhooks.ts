import { randomBytes } from 'node:crypto';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from '../repositories/sql.ts';
import { AdminError } from './errors.ts';

/*
 * An account's webhook endpoints, as operators manage them (the CLI). The target's address is
 * checked by the caller (apps/api/src/webhooks/target.ts) before it is stored.
 */

export interface WebhookEndpointView {
  id: number;
  url: string;
  events: WebhookEventType[];
  createdAt: string;
  status: 'active' | 'failing' | 'disabled';
  failingSince: string | null;
  pending: number;
}

/** Standard Webhooks secrets: `whsec_` and base64 of 24 random bytes; shown once, kept to sign. */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

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

export async function addWebhook(
  em: EntityManager,
  accountId: number,
  url: string,
  events: WebhookEventType[],
): Promise<{ id: number; url: string; events: WebhookEventType[]; secret: string }> {
  const secret = newWebhookSecret();
  const [row] = await query<{ id: number }>(
    em,
    'insert into webhook_endpoint (account_id, url, secret, events) values (?, ?, ?, ?::text[]) returning id',
    [accountId, url, secret, `{${events.join(',')}}`],
  );
  if (!row) throw new Error('the webhook endpoint was not stored');
  return { id: row.id, url, events, secret };
}

export async function listWebhooks(em: EntityManager, accountId: number): Promise<WebhookEndpointView[]> {
  const rows = await query<{
    id: number;
    url: string;
    events: string[] | string;
    created_at: string;
    failing_since: string | null;
    disabled_at: string | null;
    pending: number;
  }>(
    em,
    `select w.id, w.url, w.events, w.created_at, w.failing_since, w.disabled_at,
       (select count(*)::int from webhook_delivery d where d.endpoint_id = w.id and d.status = 'pending') as pending
     from webhook_endpoint w where w.account_id = ? order by w.id`,
    [accountId],
  );
  return rows.map((r) => ({
    id: r.id,
    url: r.url,
    events: (Array.isArray(r.events) ? r.events : r.events.replace(/[{}]/g, '').split(',')).filter(isWebhookEventType),
    createdAt: new Date(r.created_at).toISOString(),
    status: r.disabled_at ? 'disabled' : r.failing_since ? 'failing' : 'active',
    failingSince: r.failing_since ? new Date(r.failing_since).toISOString() : null,
    pending: r.pending,
  }));
}

export async function removeWebhook(em: EntityManager, accountId: number, id: number): Promise<void> {
  const removed = await query(em, 'delete from webhook_endpoint where id = ? and account_id = ? returning id', [
    id,
    accountId,
  ]);
  if (removed.length === 0) throw new AdminError(`no webhook endpoint ${id} in this account`);
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
  if (rows.length === 0) throw new AdminError(`no deliveries of event evt_${eventId} in this account`);
  return rows.length;
}
