import { mkdirSync } from 'node:fs';
import {
  conversationStore,
  databaseUnavailable,
  hashToken,
  memberStore,
  migrate,
  openOrm,
  PgAccountStore,
  PgInboxStore,
  PgIntakePageAdminStore,
  PgIntakePageStore,
  PgIntakeStore,
  PgLiveLog,
  PgMailOutbox,
  PgMediaReferences,
  PgMessageStore,
  PgMessageTemplateStore,
  PgModerationStore,
  PgNotificationStore,
  PgPeopleStore,
  PgPlayStore,
  PgReactionStore,
  PgReadLimits,
  PgReplyAddressStore,
  PgReplyStore,
  PgSiteSecrets,
  PgSiteStore,
  PgTeamStore,
  PgTranscriptStore,
  PgUpdateConversationStore,
  PgVisitorLimits,
  PgWebhookDeliveryStore,
  PgWebhookEndpointStore,
  PgWorkflowJobs,
  PgWorkflowStore,
  pendingMigrations,
  poolStats,
  purgeExpiredPeople,
  purgeIdempotencyKeys,
  purgeLiveEvents,
  RateLimiter,
  type RateLimitPolicy,
} from '@convo/db';
import { DEFAULT_MEDIA_LIMITS, type MediaDeps, type MediaLimits, PlayBuffer, sweepRecordings } from '@convo/domain';
import { ConversationListCache } from '@convo/router';
import type { MikroORM } from '@mikro-orm/core';
import { createMetrics } from '../http/metrics.ts';
import type { Services } from '../http/services.ts';
import { createLiveHub, DEFAULT_LIVE, type LiveOptions } from '../live/hub.ts';
import type { Logger } from '../logger.ts';
import { diskMedia } from '../media/backend.ts';
import { MediabunnyProbe } from '../media/probe.ts';
import type { MediaBackend } from '../media/uploads.ts';
import { defaultUploadQuotas, TusUploads, type UploadQuotas } from '../media/uploads.ts';
import { type TargetPolicy, webhookTargets } from '../workers/webhook-target.ts';
import {
  type Config,
  DEFAULT_MEDIA_DIR,
  DEFAULT_PAGE_CACHE_MB,
  DEFAULT_RATE_LIMIT,
  DEFAULT_WEBHOOK_RETENTION_DAYS,
} from './config.ts';
import { lockDataDir } from './embedded-lock.ts';

/** A token's last use is written at most this often per process: reads stay free of writes. */
export const TOKEN_TOUCH_INTERVAL_MS = 60_000;

export async function openDatabase(config: Config, logger: Logger): Promise<MikroORM> {
  const db = config.database;
  if (db.kind === 'pglite') {
    mkdirSync(db.dataDir, { recursive: true });
    lockDataDir(db.dataDir);
  }
  const orm =
    db.kind === 'postgres'
      ? await openOrm(
          {
            kind: 'postgres',
            url: db.url,
            poolMax: db.poolMax,
            statementTimeoutMs: db.statementTimeoutMs,
            namedStatements: db.namedStatements,
          },
          { onPoolError: (err) => logger.warn({ err: err.message }, 'idle database connection lost') },
        )
      : await openOrm({ kind: 'pglite', dataDir: db.dataDir });
  logger.info({ database: db.kind === 'postgres' ? 'postgres' : `pglite:${db.dataDir}` }, 'database connected');
  return orm;
}

export async function migrateDatabase(orm: MikroORM, logger: Logger): Promise<void> {
  const applied = await migrate(orm);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
}

export interface ServiceOptions {
  rateLimit: RateLimitPolicy;
  /** How long a process remembers which account a host is (0: not at all). */
  hostCacheMs?: number;
  /** Which webhook endpoints may be subscribed (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE). */
  webhookTargets?: TargetPolicy;
  /** Hold every answer to its operation's output schema at run time (default: yes). */
  checkAnswers?: boolean;
  /** What pages of conversations may be kept in memory, in bytes (0: none). */
  pageCacheBytes?: number;
  /** Days a done webhook event is kept, with its deliveries and attempts (default 30). */
  webhookRetentionDays?: number;
  /** Where recordings and their uploads are kept (default: the directory .data/media), and their limits. */
  media?: {
    backend?: MediaBackend;
    limits?: MediaLimits;
    uploadQuotas?: Partial<UploadQuotas>;
    /** Threads measuring recordings at once (PROBE_THREADS); unset: one per core. */
    probeThreads?: number;
  };
  /** Live streams per client address and per process (LIVE_STREAMS_PER_CLIENT, LIVE_STREAMS_MAX). */
  live?: LiveOptions;
  /** A speech engine is configured (TRANSCRIBE_URL): transcripts not made yet are pending, not off. */
  transcribing?: boolean;
}

/** A host moved by `account set-host` reaches every process within this time. */
export const HOST_CACHE_MS = 5_000;

export const DEFAULT_SERVICE_OPTIONS: ServiceOptions = { rateLimit: DEFAULT_RATE_LIMIT };

/**
 * The beacons' plays wait at most this long, or until this many wait, to be written in one
 * statement (the domain's PlayBuffer).
 */
const PLAY_BATCH_MS = 100;
const PLAY_BATCH_MAX = 500;
/** The plays written that a process remembers (a few MB at most), so a play reported again costs no statement. */
const PLAYS_REMEMBERED = 20_000;

/** How often expired rows are purged. */
const IDEMPOTENCY_PURGE_MS = 60 * 60_000;

export function createServices(orm: MikroORM, logger: Logger, options = DEFAULT_SERVICE_OPTIONS): Services {
  const lastTouch = new Map<number, number>();
  const limiter = new RateLimiter(orm.em, options.rateLimit);
  // Ended windows are forgotten; the timer never keeps the process alive.
  setInterval(() => limiter.sweep(), options.rateLimit.windowSeconds * 1000).unref();
  const readLimits = new PgReadLimits(orm.em);
  setInterval(() => readLimits.sweep(), 60_000).unref();
  let migrated = false;
  // The stores are built once: their reads are prepared statements and their writes native
  // inserts or their own transactions, so none keeps an identity map a request could share.
  const em = orm.em.fork();
  const plays = new PgPlayStore(em);
  const accounts = new PgAccountStore(em);
  const mailQueue = new PgMailOutbox(em);
  const webhookStore = new PgWebhookDeliveryStore(em);
  const mediaBackend = options.media?.backend ?? diskMedia(DEFAULT_MEDIA_DIR);
  const limits = options.media?.limits ?? DEFAULT_MEDIA_LIMITS;
  const media: MediaDeps = {
    store: mediaBackend.store,
    probe: new MediabunnyProbe({ threads: options.media?.probeThreads, maxSeconds: limits.maxSeconds }),
    limits,
  };
  const uploads = new TusUploads(mediaBackend.uploads, media.store, media.limits.maxBytes, logger, {
    ...defaultUploadQuotas(media.limits.maxBytes),
    ...options.media?.uploadQuotas,
  });
  const mediaReferences = new PgMediaReferences(em);
  const intake = new PgIntakeStore(em);
  const transcripts = new PgTranscriptStore(em);
  const replyAddresses = new PgReplyAddressStore(em);
  // Idempotency-Keys past their 24 hours (also deleted on reuse, by the create), ended sessions,
  // webhook events past their retention, recordings nothing wants (and their transcripts) and
  // uploads past their day are deleted now and then.
  setInterval(
    () =>
      void Promise.all([
        purgeIdempotencyKeys(orm.em.fork()),
        purgeExpiredPeople(orm.em.fork()),
        webhookStore.purgeHistory(options.webhookRetentionDays ?? DEFAULT_WEBHOOK_RETENTION_DAYS),
        purgeLiveEvents(orm.em.fork()),
        sweepRecordings({ store: media.store, references: mediaReferences }),
        transcripts.purge(),
        replyAddresses.purge(),
        uploads.sweep(),
      ]).catch((err: unknown) =>
        logger.warn(
          { err: (err as Error).message },
          'purging expired keys, sessions, webhook and live events, recordings, transcripts, reply addresses and uploads failed',
        ),
      ),
    IDEMPOTENCY_PURGE_MS,
  ).unref();
  const mailListeners: (() => void)[] = [];
  const startListeners: (() => void)[] = [];
  const live = createLiveHub(new PgLiveLog(em), options.live ?? DEFAULT_LIVE, logger);
  const metrics = createMetrics(
    () => poolStats(em),
    () => webhookStore.queueStats(),
    () => conversationLists.bytes,
    () => live.stats(),
  );
  const conversationLists = new ConversationListCache(
    options.pageCacheBytes ?? DEFAULT_PAGE_CACHE_MB * 1024 * 1024,
    metrics.pageAnswered,
  );
  return {
    conversations: conversationStore(em),
    members: memberStore(em),
    intakePages: new PgIntakePageStore(em),
    intakePageAdmin: new PgIntakePageAdminStore(em),
    webhookEndpoints: new PgWebhookEndpointStore(em),
    workflows: new PgWorkflowStore(em),
    workflowJobs: new PgWorkflowJobs(em, (err) =>
      logger.error({ err }, 'a workflow step failed; it will be tried again'),
    ),
    conversationLists,
    updateConversationStore: new PgUpdateConversationStore(em),
    teamStore: new PgTeamStore(em),
    messageStore: new PgMessageStore(em, { transcribing: options.transcribing === true }),
    plays,
    playBuffer: new PlayBuffer(plays, {
      waitMs: PLAY_BATCH_MS,
      maxPlays: PLAY_BATCH_MAX,
      remembered: PLAYS_REMEMBERED,
      onError: (err: unknown, n: number) => logger.error({ err, plays: n }, 'reported plays could not be kept'),
    }),
    reactions: new PgReactionStore(em),
    messageTemplates: new PgMessageTemplateStore(em),
    checkAnswers: options.checkAnswers ?? true,
    webhookTargets: webhookTargets(options.webhookTargets ?? { allowHttp: false, allowPrivate: false }),
    site: new PgSiteStore(em, { hostCacheMs: options.hostCacheMs ?? HOST_CACHE_MS }),
    people: new PgPeopleStore(em),
    notifications: new PgNotificationStore(em),
    secrets: new PgSiteSecrets(em),
    inbox: new PgInboxStore(em),
    moderation: new PgModerationStore(em),
    replies: new PgReplyStore(em, { transcribing: options.transcribing === true }),
    transcripts,
    replyAddresses,
    transcribing: options.transcribing === true,
    intake: {
      page: (accountId, key, options) => intake.page(accountId, key, options),
      async start(accountId, start) {
        const started = await intake.start(accountId, start);
        // A start is news for the team at once, and may ask for the visitor's link back: wake the
        // notification worker, which does both.
        if (started.kind === 'started' && started.created) for (const l of startListeners) l();
        return started;
      },
      keepPassCode: (accountId, codeHash, grant, ttlSeconds) =>
        intake.keepPassCode(accountId, codeHash, grant, ttlSeconds),
      takePassCode: (accountId, codeHash) => intake.takePassCode(accountId, codeHash),
    },
    media,
    mediaReferences,
    uploads,
    live,
    outbox: {
      async enqueue(accountId, mail) {
        await mailQueue.enqueue(accountId, mail);
        for (const listener of mailListeners) listener();
      },
    },
    mailQueue,
    onMailQueued: (listener) => mailListeners.push(listener),
    onIntakeStarted: (listener) => startListeners.push(listener),
    visitorLimits: new PgVisitorLimits(em),
    readLimits,
    authenticate: (token) => accounts.findByTokenHash(hashToken(token)),
    isUnavailable: databaseUnavailable,
    logger,
    metrics,
    webhooks: webhookStore,
    databaseBusy: async () => (await poolStats(em)).waiting > 0,
    async notReady() {
      try {
        await orm.em.getConnection().execute('select 1');
      } catch {
        return 'the database does not answer';
      }
      // Once every migration is applied it stays so for this process's code.
      migrated ||= (await pendingMigrations(orm)).length === 0;
      return migrated ? null : 'database migrations are pending';
    },
    rateLimit: (tokenId, accountId, accountLimit) => limiter.take(tokenId, accountId, accountLimit),
    async touchToken(tokenId) {
      const now = Date.now();
      if ((lastTouch.get(tokenId) ?? 0) + TOKEN_TOUCH_INTERVAL_MS > now) return;
      lastTouch.set(tokenId, now);
      await accounts.touchToken(tokenId);
    },
  };
}
