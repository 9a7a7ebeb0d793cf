import type { UnsentMail } from '@convo/pages';
import type { MikroORM } from '@mikro-orm/core';
import { type App, createApp } from '../http/app.ts';
import type { DemoMailbox } from '../http/demo-mail.ts';
import { listenForLive } from '../live/listener.ts';
import type { Logger } from '../logger.ts';
import { configuredBackend } from '../media/backend.ts';
import { startMailWorker } from '../workers/mail.ts';
import { startNotifyWorker } from '../workers/notify.ts';
import type { QueueWorker } from '../workers/queue-worker.ts';
import { startVacuuming } from '../workers/vacuum.ts';
import { startWebhookWorker } from '../workers/webhooks.ts';
import { startWorkflowWorker } from '../workers/workflows.ts';
import type { Config } from './config.ts';
import { createServices, migrateDatabase, openDatabase } from './services.ts';

export interface BuildOptions {
  /** Where the mail worker logs (default: the logger). */
  mailLogger?: Logger;
  /** The demo's mailbox: mail without SMTP_URL goes there (and to `printMail`), and `/_demo/mail` lists it. */
  demoMail?: { mailbox: DemoMailbox; printMail(mail: UnsentMail): void };
}

/** The app as the configuration describes it, on an open database. */
export async function buildApp(
  orm: MikroORM,
  config: Config,
  logger: Logger,
  options: BuildOptions = {},
): Promise<App & { smtpPort: number | null }> {
  const demo = options.demoMail;
  const services = createServices(orm, logger, {
    rateLimit: config.rateLimit,
    webhookTargets: config.webhooks,
    checkAnswers: config.checkAnswers,
    pageCacheBytes: config.pageCacheBytes,
    webhookRetentionDays: config.webhookRetentionDays,
    media: {
      backend: await configuredBackend(config.media),
      limits: config.media.limits,
      uploadQuotas: config.media.uploadQuotas,
      probeThreads: config.media.probeThreads,
    },
    live: config.live,
    transcribing: config.transcribe !== null,
  });
  const listener = listenForLive(
    services.live,
    config.database.kind === 'postgres'
      ? { kind: 'postgres', url: config.database.listenUrl }
      : { kind: 'embedded', em: orm.em },
    logger,
  );
  const mail = startMailWorker(services.mailQueue, {
    ...config.mail,
    logger: options.mailLogger ?? logger,
    onError: () => services.metrics.backgroundError('mail'),
    ...(demo
      ? {
          unsent: (m) => {
            const shown = { ...m, at: new Date() };
            demo.mailbox.add(shown);
            demo.printMail(shown);
          },
        }
      : {}),
  });
  services.onMailQueued(mail.kick);
  const notify = startNotifyWorker(services.notifications, services.secrets, {
    batchSeconds: config.notifyBatchSeconds,
    replies: config.inbound.domain ? { domain: config.inbound.domain, days: config.inbound.days } : undefined,
    logger,
    onQueued: mail.kick,
    onError: () => services.metrics.backgroundError('notifications'),
    busy: services.databaseBusy,
  });
  services.onIntakeStarted(notify.kick);
  const { retryScale, timeoutMs, ...policy } = config.webhooks;
  const webhooks = startWebhookWorker(services.webhooks, {
    policy,
    logger,
    timeoutMs,
    retryScale,
    onResult: services.metrics.webhookResult,
    onError: () => services.metrics.backgroundError('webhooks'),
    busy: services.databaseBusy,
  });
  const workflows = startWorkflowWorker(services.workflowJobs, {
    logger,
    onProgress: mail.kick,
    onError: () => services.metrics.backgroundError('workflows'),
    busy: services.databaseBusy,
  });
  const transcribe = config.transcribe;
  // Loaded only where an engine is configured: the demuxer and the muxers (mediabunny) are some
  // 20 MB of memory a server that never transcribes need not hold.
  const transcripts: QueueWorker | null = transcribe
    ? await import('./transcripts.ts').then((m) => m.startTranscripts(transcribe, services, logger))
    : null;
  const vacuuming =
    config.database.kind === 'postgres' ? startVacuuming(orm, { intervalMs: config.queueVacuumMs, logger }) : null;
  const { domain, secret, maxBytes, perPersonPerHour, perAccountPerHour, smtp, imap, auth } = config.inbound;
  const receiving = domain ? { domain, perPersonPerHour, perAccountPerHour, auth } : null;
  const app = createApp(services, {
    http: config.http,
    site: config.site,
    demoMail: demo?.mailbox,
    inbound: receiving ? { ...receiving, secret, maxBytes } : undefined,
  });
  // The SMTP listener, loaded only where one is asked for (smtp-server and its TLS are memory a
  // server without one need not hold).
  const smtpListener =
    receiving && smtp
      ? await import('../mail/smtp-listener.ts').then((m) =>
          m.startSmtpListener(services, receiving, { ...smtp, maxBytes, logger }),
        )
      : null;
  const imapReplies =
    receiving && imap
      ? await import('../workers/imap-replies.ts').then((m) =>
          m.startImapReplies(services, receiving, {
            ...imap,
            maxBytes,
            logger,
            onError: () => services.metrics.backgroundError('reply_mailbox'),
          }),
        )
      : null;
  return {
    /** Where the SMTP listener for replies listens (null: none). */
    smtpPort: smtpListener?.port ?? null,
    fetch: app.fetch,
    attachLive: app.attachLive,
    takeFile: app.takeFile,
    takeBeacon: app.takeBeacon,
    settle: app.settle,
    drain() {
      app.drain();
      void mail.stop();
      void notify.stop();
      void webhooks.stop();
      void workflows.stop();
      void transcripts?.stop();
      void vacuuming?.stop();
      void smtpListener?.close();
      void imapReplies?.stop();
      void listener.close();
    },
  };
}

/** Everything a runtime entry needs: the app, built from config, and a way to close it. */
export async function buildServer(config: Config, logger: Logger): Promise<{ app: App; orm: MikroORM }> {
  const orm = await openDatabase(config, logger);
  if (config.migrateOnStart) await migrateDatabase(orm, logger);
  return { app: await buildApp(orm, config, logger), orm };
}
