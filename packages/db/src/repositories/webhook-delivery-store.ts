import {
  type AccountAddress,
  type ConversationRecord,
  conversationPayload,
  messageCreatedPayload,
  WEBHOOK_DISABLE_AFTER_SECONDS,
  type WebhookEnvelope,
  type WebhookEventType,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { conversationColumns, recordFromRow } from './conversation-reads.ts';
import { db, run, slot, statement } from './query.ts';
import { PgSiteStore } from './site-store.ts';
import { intArray, query } from './sql.ts';

/** Events a purge statement deletes at most. */
const PURGE_BATCH = 1_000;

/** A delivery a worker took, with what sending it needs. */
export interface DueDelivery {
  id: number;
  attempts: number;
  eventId: number;
  type: WebhookEventType;
  url: string;
  secret: string;
  endpointId: number;
  /** The event's body, rendered at its first attempt and the same on every retry. */
  body: string;
  /** The body was rendered for this attempt and is not stored yet (see record). */
  fresh: boolean;
}

/** The result of one attempt, as the worker reports it. */
export interface AttemptResult {
  delivery: DueDelivery;
  /** A 2xx answer: the delivery is done. */
  ok: boolean;
  /** The answer's status; null when there was none (refused, timed out, a network error). */
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** After a failure: seconds until the next attempt, or null for none (the delivery failed). */
  retryInSeconds: number | null;
}

const CONVERSATIONS_BY_IDS = statement(
  'webhook_conversations_by_ids',
  db
    .selectFrom('conversation')
    .select(conversationColumns)
    .where('conversation.account_id', '=', slot<number>('account'))
    .where((eb) => eb('conversation.id', '=', eb.fn.any(slot<number[]>('ids')))),
);

/**
 * The worker's writes commit without waiting for the WAL to reach the disk: a crash can lose the
 * last few milliseconds of them, which only means an attempt is made again (delivery is at least
 * once anyway), while the API's own commits keep the disk's full bandwidth. `set_config(…, true)`
 * lasts for the statement's own transaction; the CTE that calls it is referenced so it runs.
 */
const ASYNC_COMMIT = `async_commit as (select set_config('synchronous_commit', 'off', true) as off)`;

interface ClaimedRow {
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
}

/** The deliveries table, as the webhook workers of every replica share it. */
export class PgWebhookDeliveryStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /**
   * Fans up to `limit` undispatched events out into one delivery per endpoint subscribed to their
   * type when they were written (and still active), in event order, so that one endpoint's
   * deliveries keep the order of its events. SKIP LOCKED keeps two workers off the same events. An
   * endpoint that already has a delivery of the event (written by a server of the version before
   * the workers dispatched) is not given a second. Returns how many events it took.
   */
  async dispatch(limit: number): Promise<number> {
    const rows = await query<{ events: number }>(
      this.em,
      `with ${ASYNC_COMMIT},
       ev as (
         update webhook_event e set dispatched = true
         where e.id in (select id from webhook_event where not dispatched order by id limit ? for update skip locked)
         returning e.id, e.account_id, e.type, e.created_at),
       fanned as (
         insert into webhook_delivery (account_id, event_id, endpoint_id, created_at)
         select ev.account_id, ev.id, w.id, ev.created_at from ev join webhook_endpoint w
           on w.account_id = ev.account_id and w.disabled_at is null and ev.type = any(w.events)
              and w.created_at <= ev.created_at
         where not exists (select 1 from webhook_delivery d where d.event_id = ev.id and d.endpoint_id = w.id)
         order by ev.id, w.id)
       select count(*)::int as events from ev cross join async_commit`,
      [limit],
    );
    return rows[0]?.events ?? 0;
  }

  /**
   * Takes due deliveries by endpoint: up to `endpoints` endpoints (those whose oldest due delivery
   * is oldest first), and up to `perEndpoint` of each one's, in order; endpoints in `busy` (this
   * process is still sending to them) are left alone, so one endpoint's deliveries stay in order and
   * a slow endpoint holds back only its own. SKIP LOCKED keeps two workers (in any replicas) off
   * the same rows, and the lease (next attempt moved `leaseSeconds` out, longer than an endpoint's
   * attempts may take) hands a delivery whose worker died to another. Events sent for the first
   * time are rendered together and stored, so every retry sends the same bytes.
   */
  async claimDue(claim: {
    endpoints: number;
    perEndpoint: number;
    busy: readonly number[];
    leaseSeconds: number;
  }): Promise<DueDelivery[]> {
    const rows = await query<ClaimedRow>(
      this.em,
      `with ${ASYNC_COMMIT},
       due as (
         select endpoint_id, min(id) as first from webhook_delivery
         where status = 'pending' and next_attempt_at <= now() and endpoint_id <> all(?::int[])
         group by endpoint_id order by first limit ?),
       picked as (
         select p.id from due cross join lateral (
           select id from webhook_delivery
           where endpoint_id = due.endpoint_id and status = 'pending' and next_attempt_at <= now()
           order by id limit ? for update skip locked) p),
       taken as (
         update webhook_delivery d set attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ?)
         where d.id in (select id from picked)
         returning d.id, d.attempts, d.event_id, d.endpoint_id)
       select t.id, t.attempts, t.event_id, e.type, w.url, w.secret, t.endpoint_id, e.payload, e.account_id,
              e.conversation_id, e.message_id, e.created_at, a.key, a.host
       from taken t join webhook_event e on e.id = t.event_id join webhook_endpoint w on w.id = t.endpoint_id
       join account a on a.id = e.account_id cross join async_commit
       order by t.id`,
      // An array literal: the query builder would spread a JS array into a list of values.
      [`{${claim.busy.map((id) => Math.trunc(id)).join(',')}}`, claim.endpoints, claim.perEndpoint, claim.leaseSeconds],
    );
    const fresh = await this.render(rows.filter((r) => r.payload === null || r.payload === undefined));
    return rows.map((r) => {
      const stored = r.payload === null || r.payload === undefined ? undefined : r.payload;
      return {
        id: Number(r.id),
        attempts: r.attempts,
        eventId: Number(r.event_id),
        type: r.type,
        url: r.url,
        secret: r.secret,
        endpointId: r.endpoint_id,
        // Stored bodies are the exact text sent (a JSON string); early ones were stored as objects.
        body:
          stored === undefined
            ? (fresh.get(String(r.event_id)) ?? '')
            : typeof stored === 'string'
              ? stored
              : JSON.stringify(stored),
        fresh: stored === undefined,
      };
    });
  }

  /**
   * An endpoint just failed: the deliveries claimed with the failed one are given back untried
   * (their claim undone), and every delivery of the endpoint due before `afterSeconds` from now
   * waits until then, with the one that failed. A receiver that is down then costs one attempt per
   * retry, not one per delivery. A later next attempt (another worker's lease) is left as it is.
   */
  async holdBack(endpointId: number, untried: readonly DueDelivery[], afterSeconds: number): Promise<void> {
    await query(
      this.em,
      `with given as (
         update webhook_delivery d set attempts = d.attempts - 1, next_attempt_at = now() + make_interval(secs => ?)
         from jsonb_to_recordset(?::jsonb) as r(id bigint, attempts int)
         where d.id = r.id and d.attempts = r.attempts and d.status = 'pending'
         returning d.id)
       update webhook_delivery d set next_attempt_at = now() + make_interval(secs => ?)
       where d.endpoint_id = ? and d.status = 'pending' and d.next_attempt_at < now() + make_interval(secs => ?)
         and d.id not in (select id from given)`,
      [
        afterSeconds,
        JSON.stringify(untried.map((d) => ({ id: d.id, attempts: d.attempts }))),
        afterSeconds,
        endpointId,
        afterSeconds,
      ],
    );
  }

  /** The bodies of events sent for the first time, from the rows as they are now. */
  private async render(rows: ClaimedRow[]): Promise<Map<string, string>> {
    const bodies = new Map<string, string>();
    const conversations = new Map<number, Map<number, ConversationRecord>>();
    const wanted = new Map<number, Set<number>>();
    for (const r of rows) {
      if (r.type !== 'conversation_created' && r.type !== 'conversation_updated') continue;
      wanted.set(r.account_id, (wanted.get(r.account_id) ?? new Set()).add(r.conversation_id));
    }
    for (const [accountId, ids] of wanted) {
      const found = await run(this.em, CONVERSATIONS_BY_IDS, { account: accountId, ids: [...ids] });
      conversations.set(accountId, new Map(found.map((row) => [row.id, recordFromRow(row)])));
    }
    for (const r of rows) {
      if (bodies.has(String(r.event_id))) continue;
      const account: AccountAddress = { key: r.key, host: r.host };
      const at = new Date(r.created_at);
      let envelope: WebhookEnvelope | null = null;
      if (r.type === 'conversation_created' || r.type === 'conversation_updated') {
        const record = conversations.get(r.account_id)?.get(r.conversation_id);
        if (record) envelope = conversationPayload(r.type, account, record, at);
      } else if (r.type === 'message_created' && r.message_id !== null) {
        const found = await new PgSiteStore(this.em).messageById(r.account_id, r.message_id);
        if (found) envelope = messageCreatedPayload(account, found.conversation, found.message, at);
      }
      // The row is gone (deleted or hidden since), or the event tells only ids (message_hidden:
      // what was hidden is not sent out again): the event says what happened, with its ids.
      envelope ??= {
        type: r.type,
        timestamp: at.toISOString(),
        data: { conversation: { id: r.conversation_id }, ...(r.message_id ? { message: { id: r.message_id } } : {}) },
      };
      bodies.set(String(r.event_id), JSON.stringify(envelope));
    }
    return bodies;
  }

  /**
   * Records a batch of attempts in one statement. A success ends its delivery; a failure schedules
   * the next attempt, or fails the delivery after the last. Only the claim that made an attempt is
   * updated: a redelivery queued meanwhile (attempts reset) stays queued. An endpoint's last result
   * decides its state: a success clears its failing streak; a failure starts one, and an endpoint
   * failing for three days is disabled.
   *
   * A body rendered for this attempt is stored (the exact text, so every retry sends the same
   * bytes) when it will be sent again: the attempt failed, or another endpoint's delivery of the
   * event is still to come (the first stored is kept). A body delivered at once to its only
   * endpoint is never written back.
   */
  async record(results: AttemptResult[]): Promise<void> {
    if (results.length === 0) return;
    await query(
      this.em,
      `with ${ASYNC_COMMIT},
       r as (select * from jsonb_to_recordset(?::jsonb) as t(seq int, id bigint, attempts int, endpoint int, ok bool,
               status int, error text, latency int, retry float8, event bigint, body text)),
       body as (
         update webhook_event e set payload = to_jsonb(r.body)
         from r where e.id = r.event and r.body is not null and e.payload is null
           and (not r.ok or exists (select 1 from webhook_delivery o
                                    where o.event_id = r.event and o.id <> r.id and o.status = 'pending'))),
       attempt as (insert into webhook_attempt (delivery_id, status, latency_ms, error)
                   select id, status, latency, error from r order by seq),
       delivery as (
         update webhook_delivery d set
           status = case when r.ok then 'delivered' when r.retry is null then 'failed' else 'pending' end,
           delivered_at = case when r.ok then now() else d.delivered_at end,
           last_status = r.status, last_error = r.error,
           next_attempt_at = case when not r.ok and r.retry is not null
                                  then now() + make_interval(secs => r.retry) else d.next_attempt_at end
         from r where d.id = r.id and d.attempts = r.attempts),
       latest as (select distinct on (endpoint) endpoint, ok from r order by endpoint, seq desc)
       update webhook_endpoint w set
         failing_since = case when latest.ok then null else coalesce(w.failing_since, now()) end,
         disabled_at = case when not latest.ok and w.failing_since < now() - make_interval(secs => ?)
                            then now() else w.disabled_at end
       from latest cross join async_commit
       where w.id = latest.endpoint and (not latest.ok or w.failing_since is not null)`,
      [
        JSON.stringify(
          results.map((x, seq) => ({
            seq,
            id: x.delivery.id,
            attempts: x.delivery.attempts,
            endpoint: x.delivery.endpointId,
            ok: x.ok,
            status: x.status,
            error: x.error?.slice(0, 500) ?? null,
            latency: x.latencyMs,
            retry: x.ok ? null : x.retryInSeconds,
            event: x.delivery.eventId,
            body: x.delivery.fresh ? x.delivery.body : null,
          })),
        ),
        WEBHOOK_DISABLE_AFTER_SECONDS,
      ],
    );
    const failing = [...new Set(results.filter((x) => !x.ok).map((x) => x.delivery.endpointId))];
    if (failing.length === 0) return;
    // A disabled endpoint is sent nothing more: what it still had waiting fails now.
    await query(
      this.em,
      `update webhook_delivery d set status = 'failed', last_error = 'the endpoint was disabled'
       from webhook_endpoint w
       where w.id = any(?::int[]) and w.disabled_at is not null and d.endpoint_id = w.id and d.status = 'pending'`,
      [intArray(failing)],
    );
  }

  /**
   * Forgets the events older than `days` whose deliveries are all done (delivered or failed), with
   * their deliveries and attempts (the foreign keys cascade): the history `webhook deliveries`
   * shows and `webhook redeliver` starts from. An event still waiting to be fanned out or with a
   * delivery still pending stays, whatever its age. In batches, so that no statement holds many
   * locks for long. Returns how many events went.
   */
  async purgeHistory(days: number): Promise<number> {
    let purged = 0;
    for (;;) {
      const rows = await query(
        this.em,
        `delete from webhook_event where id in (
           select e.id from webhook_event e
           where e.dispatched and e.created_at < now() - make_interval(days => ?::int)
             and not exists (select 1 from webhook_delivery d where d.event_id = e.id and d.status = 'pending')
           order by e.id limit ${PURGE_BATCH})
         returning 1`,
        [days],
      );
      purged += rows.length;
      if (rows.length < PURGE_BATCH) return purged;
    }
  }

  /**
   * Figures for /metrics: what waits to be sent (pending deliveries, and events not yet fanned out
   * to their endpoints), and the age of the oldest (a delivery carries its event's time).
   */
  async queueStats(): Promise<{ pending: number; oldestSeconds: number }> {
    const [row] = await query<{ pending: number; oldest: number | null }>(
      this.em,
      `select d.n + e.n as pending, extract(epoch from now() - least(d.oldest, e.oldest))::float8 as oldest
       from (select count(*)::int as n, min(created_at) as oldest from webhook_delivery where status = 'pending') d,
            (select count(*)::int as n, min(created_at) as oldest from webhook_event where not dispatched) e`,
    );
    return { pending: row?.pending ?? 0, oldestSeconds: row?.oldest ?? 0 };
  }
}
