import {
  isWebhookEventType,
  type WebhookEndpointRecord,
  type WebhookEndpointStore,
  type WebhookEventType,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from './sql.ts';

/** An account's webhook endpoints, for the API's subscriptions and the operators' CLI alike. */

interface Row {
  id: number;
  url: string;
  events: string[] | string;
  created_at: string | Date;
  failing_since: string | Date | null;
  disabled_at: string | Date | null;
  pending: number;
}

const COLUMNS = `w.id, w.url, w.events, w.created_at, w.failing_since, w.disabled_at,
  (select count(*)::int from webhook_delivery d where d.endpoint_id = w.id and d.status = 'pending')
  + (select count(*)::int from webhook_event e where not e.dispatched and e.account_id = w.account_id
       and e.type = any(w.events) and e.created_at >= w.created_at and w.disabled_at is null) as pending`;

const date = (v: string | Date | null) => (v === null ? null : new Date(v));

/** text[] arrives as an array from node-postgres and as `{a,b}` text from some drivers. */
const eventsOf = (v: string[] | string): WebhookEventType[] =>
  (Array.isArray(v) ? v : v.replace(/[{}]/g, '').split(',')).filter(isWebhookEventType);

function record(r: Row): WebhookEndpointRecord {
  return {
    id: r.id,
    url: r.url,
    events: eventsOf(r.events),
    createdAt: new Date(r.created_at),
    failingSince: date(r.failing_since),
    disabledAt: date(r.disabled_at),
    pending: r.pending,
  };
}

export class PgWebhookEndpointStore implements WebhookEndpointStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  add(
    accountId: number,
    endpoint: { url: string; events: WebhookEventType[]; secret: string },
    max: number,
  ): Promise<WebhookEndpointRecord | null> {
    // The account's row is locked while its endpoints are counted, so two subscriptions at once
    // are counted one after the other. Inside a caller's transaction (the seed loader) this joins it.
    return this.em.transactional(async (tx) => {
      await query(tx, 'select id from account where id = ? for update', [accountId]);
      const [count] = await query<{ n: number }>(
        tx,
        'select count(*)::int as n from webhook_endpoint where account_id = ?',
        [accountId],
      );
      if ((count?.n ?? 0) >= max) return null;
      const [row] = await query<Row>(
        tx,
        `insert into webhook_endpoint as w (account_id, url, secret, events) values (?, ?, ?, ?::text[])
         returning w.id, w.url, w.events, w.created_at, w.failing_since, w.disabled_at, 0 as pending`,
        [accountId, endpoint.url, endpoint.secret, `{${endpoint.events.join(',')}}`],
      );
      return row ? record(row) : null;
    });
  }

  async list(accountId: number): Promise<WebhookEndpointRecord[]> {
    const rows = await query<Row>(
      this.em,
      `select ${COLUMNS} from webhook_endpoint w where w.account_id = ? order by w.id`,
      [accountId],
    );
    return rows.map(record);
  }

  async remove(accountId: number, id: number): Promise<boolean> {
    const removed = await query(this.em, 'delete from webhook_endpoint where id = ? and account_id = ? returning id', [
      id,
      accountId,
    ]);
    return removed.length > 0;
  }
}
