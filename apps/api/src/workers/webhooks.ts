import type { AttemptResult, DueDelivery, PgWebhookDeliveryStore } from '@convo/db';
import { webhookRetryDelaySeconds } from '@convo/domain';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import type { Agent, request } from 'undici';
import type { Logger } from '../logger.ts';
import { type QueueWorker, startQueueWorker } from './queue-worker.ts';
import { guardedLookup, isPublicAddress, type TargetPolicy, TargetRefused, targetUrl } from './webhook-target.ts';

/*
 * Delivers webhook events. Every replica runs one worker; they share the events and deliveries
 * tables, each taking rows with SKIP LOCKED, so an event is fanned out and an attempt is made by
 * one worker only. A step fans new events out into deliveries, then sends the due ones. A delivery is POSTed
 * with the Standard Webhooks headers (webhook-id, the same on every retry, so receivers can
 * de-duplicate; webhook-timestamp; webhook-signature, HMAC-SHA256 with the endpoint's secret).
 * A 2xx within 10 s delivers it; anything else is tried again on the domain's schedule.
 *
 * Endpoints are independent: each step claims a few due deliveries of each of up to ENDPOINTS
 * endpoints this process is not already sending to, and each endpoint's are sent in order on a
 * lane of their own, recorded when that lane is done. When an endpoint fails, its other due
 * deliveries (claimed or not) wait for its retry untried; so a receiver that never answers costs
 * one timeout per retry and holds back nobody else's deliveries.
 */

export type WebhookWorker = QueueWorker;

export interface WebhookWorkerOptions {
  policy: TargetPolicy;
  logger: Logger;
  /** How often to look for due deliveries (default 1 s). */
  intervalMs?: number;
  /** How long an endpoint has to answer (default 10 s). */
  timeoutMs?: number;
  /** Seconds until the next attempt after `attempts` failed ones, or null: give up (default: the domain's schedule). */
  retryDelay?: (attempts: number) => number | null;
  /** Multiplies the retry schedule (`WEBHOOK_RETRY_SCALE`; fractions of a second are kept). */
  retryScale?: number;
  onResult?: (result: 'delivered' | 'retry' | 'failed') => void;
  /** Told when a step or a lane fails (a statement the worker cannot run): /metrics counts it. */
  onError?: () => void;
  /** True while the API waits for database connections: a batch then waits (up to 1 s) for it. */
  busy?: () => Promise<boolean>;
}

/** Events fanned out into deliveries per step. */
const BATCH = 20;
/** Endpoints this process sends to at once, each on its own lane. */
const ENDPOINTS = 20;
/** Deliveries of one endpoint claimed at once (sent one after another, in order). */
const PER_ENDPOINT = 10;

export function startWebhookWorker(store: PgWebhookDeliveryStore, settings: WebhookWorkerOptions): WebhookWorker {
  const timeoutMs = settings.timeoutMs ?? 10_000;
  const scale = settings.retryScale ?? 1;
  const retryDelay = (attempts: number) => {
    const seconds = (settings.retryDelay ?? webhookRetryDelaySeconds)(attempts);
    return seconds === null ? null : seconds * scale;
  };
  // Every connection's DNS lookup refuses non-public addresses (unless allowed): checked at the
  // moment of connecting, not only when the endpoint was subscribed.
  // Made with the first delivery: undici is memory a server without webhooks to send need not hold.
  let undici: Promise<{ agent: Agent; request: typeof request }> | undefined;
  const client = () => {
    undici ??= import('undici').then((u) => ({
      agent: new u.Agent({ connect: { lookup: guardedLookup(settings.policy) }, connections: 8 }),
      request: u.request,
    }));
    return undici;
  };

  /** One attempt: its result, to be recorded with the rest of its batch. */
  async function send(d: DueDelivery): Promise<AttemptResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const failed = (status: number | null, error: string): AttemptResult => {
      const retryInSeconds = retryDelay(d.attempts);
      settings.onResult?.(retryInSeconds === null ? 'failed' : 'retry');
      return { delivery: d, ok: false, status, error, latencyMs: ms(), retryInSeconds };
    };
    try {
      const url = targetUrl(d.url, settings.policy);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // An address in the URL is connected to without a lookup: check it here.
      if (ipaddr.isValid(host) && !settings.policy.allowPrivate && !isPublicAddress(host)) {
        throw new TargetRefused(`the endpoint is a non-public address (${host})`);
      }
      const id = `evt_${d.eventId}`;
      const at = new Date();
      const { agent, request } = await client();
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'conversations-api-webhooks',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(d.secret).sign(id, at, d.body),
        },
        body: d.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        settings.onResult?.('delivered');
        return { delivery: d, ok: true, status: res.statusCode, error: null, latencyMs: ms(), retryInSeconds: null };
      }
      return failed(res.statusCode, `HTTP ${res.statusCode}`);
    } catch (e) {
      const err = e as Error & { cause?: Error };
      return failed(null, err.cause?.message ?? err.message);
    }
  }

  /** The endpoints this process is sending to, and when each lane is done. */
  const lanes = new Map<number, Promise<void>>();

  /** One endpoint's claimed deliveries, in order; at its first failure the endpoint's others wait with it. */
  async function lane(list: DueDelivery[]): Promise<void> {
    const results: AttemptResult[] = [];
    for (const [i, d] of list.entries()) {
      const result = await send(d);
      results.push(result);
      if (!result.ok) {
        await store.holdBack(d.endpointId, list.slice(i + 1), result.retryInSeconds ?? 0);
        break;
      }
    }
    // The lane's results in one statement: a handful of statements per lane, not per delivery.
    await store.record(results);
  }

  const worker = startQueueWorker({
    name: 'webhook deliveries',
    logger: settings.logger,
    intervalMs: settings.intervalMs ?? 1_000,
    busy: settings.busy,
    maxYieldMs: 1_000,
    onError: settings.onError,
    async step() {
      // New events become one delivery per subscribed endpoint first (the creates wrote only the
      // events): as many as a step sends, so that under a load the worker yields to (a step a
      // second) it writes no more than its sending needs; the rest wait as events.
      const dispatched = await store.dispatch(BATCH);
      if (lanes.size >= ENDPOINTS) return false;
      const due = await store.claimDue({
        endpoints: ENDPOINTS - lanes.size,
        perEndpoint: PER_ENDPOINT,
        busy: [...lanes.keys()],
        // A lane is held for all its attempts, one after another, plus a margin.
        leaseSeconds: Math.ceil((PER_ENDPOINT * timeoutMs) / 1000) + 5,
      });
      const byEndpoint = new Map<number, DueDelivery[]>();
      for (const d of due) byEndpoint.set(d.endpointId, [...(byEndpoint.get(d.endpointId) ?? []), d]);
      for (const [endpoint, list] of byEndpoint) {
        const done = lane(list)
          .catch((err: unknown) => {
            settings.logger.error(
              { err, endpoint },
              'webhook deliveries could not be recorded; their lease hands them on',
            );
            settings.onError?.();
          })
          .finally(() => {
            lanes.delete(endpoint);
            worker.kick();
          });
        lanes.set(endpoint, done);
      }
      return due.length > 0 || dispatched > 0;
    },
  });
  return {
    kick: worker.kick,
    async stop() {
      await worker.stop();
      await Promise.all(lanes.values());
      if (undici) await (await undici).agent.close();
    },
  };
}
