import { type NotificationStore, type SiteSecrets, sendNotifications } from '@convo/domain';
import { notificationHtml, signInLinks } from '@convo/pages';
import type { Logger } from '../logger.ts';
import { type QueueWorker, startQueueWorker } from './queue-worker.ts';

/*
 * Tells people that someone answered (domain: notifications.ts). Each round turns posted messages
 * into pending mails (and mails a visitor who started a conversation under an address their link
 * back) and queues the due ones into the mail queue, which the mail worker sends. Both
 * are tables taken with SKIP LOCKED, so every replica runs one and a restart loses nothing.
 */

export interface NotifyOptions {
  /** A mail waits this long after its first message for more (NOTIFY_BATCH_MINUTES). */
  batchSeconds: number;
  logger: Logger;
  /** How often to look (at most 5 s, and often enough for a short batch window). */
  intervalMs?: number;
  /** Told after a round queued mail: the mail worker sends it at once. */
  onQueued?: () => void;
  onError?: () => void;
  busy?: () => Promise<boolean>;
  /** Mails may be answered at reply addresses on this domain, good for `days` (INBOUND_MAIL_DOMAIN). */
  replies?: { domain: string; days: number } | undefined;
}

export function startNotifyWorker(store: NotificationStore, secrets: SiteSecrets, options: NotifyOptions): QueueWorker {
  return startQueueWorker({
    name: 'the notifications',
    logger: options.logger,
    intervalMs: options.intervalMs ?? Math.max(100, Math.min(5_000, (options.batchSeconds * 1000) / 4)),
    onError: options.onError,
    // The API comes first: under a load that keeps requests waiting for a connection, a round
    // waits up to a second (as the webhook deliveries do); the mail it makes goes after.
    busy: options.busy,
    maxYieldMs: 1_000,
    async step() {
      const did = await sendNotifications(store, secrets, {
        batchSeconds: options.batchSeconds,
        html: notificationHtml,
        replies: options.replies,
        links: signInLinks,
      });
      if (did) options.onQueued?.();
      return did;
    },
  });
}
