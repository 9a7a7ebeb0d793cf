import type { AttemptResult, DueDelivery, MikroWebhookStore } from '@convo/db';
import { webhookRetryDelaySeconds } from '@convo/domain';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import type { Logger } from '../logger.ts';
import { type QueueWorker, startQueueWorker } from '../queue-worker.ts';
import { guardedLookup, isPublicAddress, type TargetPolicy, TargetRefused, targetUrl } from './target.ts';

/*
 * Delivers webhook events. Every replica runs one worker; they share the events and deliveries
 * tables, each taking rows with SKIP LOCKED, so an event is fanned out and an attempt is made by
 * one worker only. A step fans new events out into deliveries, then sends the due ones. A delivery is POSTed
 * with the Standard Webhooks headers (webhook-id, the same on every retry, so receivers can
 * de-duplicate; webhook-timestamp; webhook-signature, HMAC-SHA256 with the endpoint's secret).
 * A 2xx within 10 s delivers it; anything else is tried again on the domain's schedule.
 */

export type WebhookWorker = QueueWorker;

export interface WebhookWorkerOptions {
  policy: TargetPolicy;
  logger: Logger;
  /** How often to look for due deliveries (default 1 s). */
  intervalMs?: number;
  /** How long an endpoint has to answer (default 10 s). */
  timeoutMs?: number;
  /** Seconds until the next attempt after `attempts` failed ones, or null: give up. */
  retryDelay?: (attempts: number) => number | null;
  onResult?: (result: 'delivered' | 'retry' | 'failed') => void;
  /** True while the API waits for database connections: a batch then waits (up to 1 s) for it. */
  busy?: () => Promise<boolean>;
}

const BATCH = 20;

export function startWebhookWorker(store: MikroWebhookStore, o: WebhookWorkerOptions): WebhookWorker {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const retryDelay = o.retryDelay ?? ((attempts: number) => webhookRetryDelaySeconds(attempts));
  // Every connection's DNS lookup refuses non-public addresses (unless allowed): checked at the
  // moment of connecting, not only when the endpoint was subscribed.
  const agent = new Agent({ connect: { lookup: guardedLookup(o.policy) }, connections: 8 });

  /** One attempt: its result, to be recorded with the rest of its batch. */
  async function send(d: DueDelivery): Promise<AttemptResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const failed = (status: number | null, error: string): AttemptResult => {
      const retryInSeconds = retryDelay(d.attempts);
      o.onResult?.(retryInSeconds === null ? 'failed' : 'retry');
      return { delivery: d, ok: false, status, error, latencyMs: ms(), retryInSeconds };
    };
    try {
      const url = targetUrl(d.url, o.policy);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // An address in the URL is connected to without a lookup: check it here.
      if (ipaddr.isValid(host) && !o.policy.allowPrivate && !isPublicAddress(host)) {
        throw new TargetRefused(`the endpoint is a non-public address (${host})`);
      }
      const id = `evt_${d.eventId}`;
      const at = new Date();
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
        o.onResult?.('delivered');
        return { delivery: d, ok: true, status: res.statusCode, error: null, latencyMs: ms(), retryInSeconds: null };
      }
      return failed(res.statusCode, `HTTP ${res.statusCode}`);
    } catch (e) {
      const err = e as Error & { cause?: Error };
      return failed(null, err.cause?.message ?? err.message);
    }
  }

  const worker = startQueueWorker({
    name: 'webhook deliveries',
    logger: o.logger,
    intervalMs: o.intervalMs ?? 1_000,
    busy: o.busy,
    maxYieldMs: 1_000,
    async step() {
      // New events become one delivery per subscribed endpoint first (the creates wrote only the
      // events): as many as a step sends, so that under a load the worker yields to (a step a
      // second) it writes no more than its sending needs; the rest wait as events.
      const dispatched = await store.dispatch(BATCH);
      // A batch is held for all its attempts, one endpoint's in a row, plus a margin.
      const due = await store.claimDue(BATCH, Math.ceil((BATCH * timeoutMs) / 1000) + 5);
      // One endpoint's deliveries go out in the order of their events; endpoints in parallel.
      const byEndpoint = new Map<number, DueDelivery[]>();
      for (const d of due) byEndpoint.set(d.endpointId, [...(byEndpoint.get(d.endpointId) ?? []), d]);
      const results = await Promise.all(
        [...byEndpoint.values()].map(async (list) => {
          const sent: AttemptResult[] = [];
          for (const d of list) sent.push(await send(d));
          return sent;
        }),
      );
      // The batch's results in one statement: a handful of statements per batch, not per delivery.
      await store.record(results.flat());
      return due.length > 0 || dispatched > 0;
    },
  });
  return {
    kick: worker.kick,
    async stop() {
      await worker.stop();
      await agent.close();
    },
  };
}
