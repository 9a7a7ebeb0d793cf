import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_INBOUND_LIMITS,
  DEFAULT_MEDIA_LIMITS,
  DEFAULT_NOTIFY_BATCH_MINUTES,
  DEFAULT_REPLY_ADDRESS_DAYS,
  type MediaLimits,
} from '@convo/domain';
import { DEFAULT_SITE_LIMITS } from '@convo/pages';
import { z } from 'zod';
import { DEFAULT_HTTP, DEFAULT_SITE, type HttpSettings, type SiteSettings } from '../http/settings.ts';
import { DEFAULT_LIVE, type LiveOptions } from '../live/hub.ts';
import type { S3Options } from '../media/s3-store.ts';
import type { UploadQuotas } from '../media/uploads.ts';

/*
 * The only module that reads the environment. Everything is validated once at start; a bad value
 * stops the process with a message naming the variable.
 */

/** Requests per window for each token unless its account sets its own, and the window: stops runaway clients. */
export const DEFAULT_RATE_LIMIT = { limit: 600_000, windowSeconds: 60 };

/** Pages of conversations each process keeps by change mark, in MiB: about 50 pages of 50 conversations. */
export const DEFAULT_PAGE_CACHE_MB = 16;

/** Where recordings are kept unless MEDIA_DIR says otherwise (beside PGlite's DATA_DIR, not in it). */
export const DEFAULT_MEDIA_DIR = '.data/media';

/** Days a webhook event whose deliveries are all done is kept. */
export const DEFAULT_WEBHOOK_RETENTION_DAYS = 30;

const ZBoolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const ZEnv = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /**
   * Where the one listening connection of each process (live updates) goes: PostgreSQL itself,
   * when DATABASE_URL is a pooler in transaction mode (LISTEN needs a session of its own).
   */
  LISTEN_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  DATA_DIR: z.string().min(1).default('.data/pglite'),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /** false behind a pooler in transaction mode (PgBouncer < 1.21): no named prepared statements. */
  DB_NAMED_STATEMENTS: ZBoolean.default(true),
  STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MIGRATE_ON_START: ZBoolean.default(true),
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(10 * 1024 * 1024)
    .default(DEFAULT_HTTP.body.maxBytes),
  /** Requests per window for each token, unless its account sets its own; 0 turns limiting off. */
  RATE_LIMIT: z.coerce.number().int().min(0).max(1_000_000_000).default(DEFAULT_RATE_LIMIT.limit),
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().min(1).max(86_400).default(DEFAULT_RATE_LIMIT.windowSeconds),
  /** A request that has not been answered by then gets 503; a slow database cannot hold it forever. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_HTTP.requestTimeoutMs),
  /** A body must have arrived this long after reading began; else 408. */
  BODY_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_HTTP.body.timeoutMs),
  /** An answer its client has not taken this long after it was ready is cut off (Node). */
  SEND_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /** The most calls one tRPC batch may carry. */
  TRPC_MAX_BATCH: z.coerce.number().int().min(1).max(1_000).default(DEFAULT_HTTP.maxBatch),
  /** The origin absolute links (Link headers) are built on, e.g. https://api.example.com. */
  PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /**
   * Behind how many proxies the server runs (`true` is 1, `false` 0): their X-Forwarded-Host/-Proto
   * are believed, and the client's address is the X-Forwarded-For entry that many from the right.
   */
  TRUST_PROXY: z
    .union([z.enum(['true', 'false']), z.coerce.number().int().min(0).max(10)], {
      error: 'must be true, false or a number of proxies (0-10)',
    })
    .transform((v) => (v === 'true' ? 1 : v === 'false' ? 0 : v))
    .default(0),
  /** How many leading bits of an IPv6 address the per-address limits count as one client (a /64 by default). */
  CLIENT_IPV6_PREFIX: z.coerce.number().int().min(16).max(128).default(DEFAULT_HTTP.proxies.ipv6Prefix),
  /** The bearer token /metrics asks for; unset, /metrics is not served. */
  METRICS_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .regex(/^\S+$/, 'must not contain spaces')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** Where mail (sign-in links) leaves, e.g. smtp://user:pass@mail.example.com:587; unset, mail is logged. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  MAIL_FROM: z.string().min(3).default('Conversations <no-reply@localhost>'),
  /** Notification mails may be answered at reply+<token>@ this domain (its MX points at a receiver); unset, they may not. */
  INBOUND_MAIL_DOMAIN: z
    .string()
    .regex(
      /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i,
      'must be a domain name, such as reply.example.com',
    )
    .transform((d) => d.toLowerCase())
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** The bearer token POST /inbound/mail asks of a relay; unset, that receiver is not served. */
  INBOUND_MAIL_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters')
    .regex(/^\S+$/, 'must not contain spaces')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** The largest reply mail taken in, in bytes (a phone's voice memo fits). */
  INBOUND_MAIL_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(1024 * 1024 * 1024)
    .default(25 * 1024 * 1024),
  /** Reply mails taken in from one person an hour; 0: no limit. */
  INBOUND_MAIL_LIMIT_PER_PERSON: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(DEFAULT_INBOUND_LIMITS.perPersonPerHour),
  /** Reply mails taken in for one account an hour; 0: no limit. */
  INBOUND_MAIL_LIMIT_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(0)
    .max(100_000_000)
    .default(DEFAULT_INBOUND_LIMITS.perAccountPerHour),
  /** The built-in SMTP listener's port (the domain's MX, or a relay, delivers to it; 0: any free one); unset, none listens. */
  INBOUND_SMTP_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** The address the SMTP listener binds (HOST unless told). */
  INBOUND_SMTP_HOST: z
    .string()
    .min(1)
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** PEM files of the certificate and key the SMTP listener offers STARTTLS with; unset, it offers none. */
  INBOUND_SMTP_TLS_CERT: z
    .string()
    .min(1)
    .optional()
    .or(z.literal('').transform(() => undefined)),
  INBOUND_SMTP_TLS_KEY: z
    .string()
    .min(1)
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** A mailbox reply mail lands in, polled: imaps://user:password@host[:port][/mailbox]; unset, none is polled. */
  INBOUND_IMAP_URL: z
    .string()
    .regex(/^imaps?:\/\/[^/@\s]+@[^/\s]+(\/\S*)?$/, 'must be an imap:// or imaps:// URL with a user and password')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** How often that mailbox is looked at. */
  INBOUND_IMAP_INTERVAL_S: z.coerce.number().min(1).max(3600).default(60),
  /** Check SPF, DKIM and DMARC of every reply mail, and refuse one its sender's domain disowns. */
  INBOUND_MAIL_AUTH: ZBoolean.default(false),
  /** The DNS servers those checks ask, host or host:port, comma-separated; unset, the system's. */
  INBOUND_MAIL_AUTH_DNS: z
    .string()
    .regex(/^[\w.:[\]-]+(,[\w.:[\]-]+)*$/, 'must be DNS servers, host or host:port, comma-separated')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** Days a reply address takes answers. */
  REPLY_ADDRESS_DAYS: z.coerce.number().int().min(1).max(365).default(DEFAULT_REPLY_ADDRESS_DAYS),
  /** A notification mail waits this long after its first message, and carries everything since (one per person and conversation). */
  NOTIFY_BATCH_MINUTES: z.coerce.number().min(0).max(1440).default(DEFAULT_NOTIFY_BATCH_MINUTES),
  /** Form posts (replies, sign-in requests) per client address per minute on the sites; 0: no limit. */
  FORM_LIMIT_PER_IP: z.coerce.number().int().min(0).max(1_000_000).default(DEFAULT_SITE_LIMITS.perIpPerMinute),
  /** Replies and sign-in links per e-mail address per 15 minutes; 0: no limit. */
  FORM_LIMIT_PER_EMAIL: z.coerce.number().int().min(0).max(1_000_000).default(DEFAULT_SITE_LIMITS.perEmailPer15Minutes),
  /** Mail to addresses nobody has confirmed (sign-in links, reply and start confirmations) per account per hour; 0: no limit. */
  MAIL_LIMIT_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(DEFAULT_SITE_LIMITS.unconfirmedMailPerAccountPerHour),
  /** Recordings sent to one client at once (a player holds one or two; a load test from one address, dozens); 0: no limit. */
  MEDIA_DOWNLOADS_PER_CLIENT: z.coerce
    .number()
    .int()
    .min(0)
    .max(100_000)
    .default(DEFAULT_SITE_LIMITS.downloadsPerClient),
  /** Recordings one process sends at once; 0: no limit. */
  MEDIA_DOWNLOADS_MAX: z.coerce.number().int().min(0).max(1_000_000).default(DEFAULT_SITE_LIMITS.downloadsMax),
  /** Page reads (GET, HEAD; assets aside) per client address per minute on the sites, shared by replicas; 0: no limit. */
  PAGE_LIMIT_PER_IP: z.coerce.number().int().min(0).max(1_000_000).default(DEFAULT_SITE_LIMITS.readsPerIpPerMinute),
  /** Plays reported by the pages' players (played receipts) per client address per minute; 0: no limit. */
  PLAY_LIMIT_PER_IP: z.coerce.number().int().min(0).max(1_000_000).default(DEFAULT_SITE_LIMITS.playsPerIpPerMinute),
  REACTION_LIMIT_PER_IP: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(DEFAULT_SITE_LIMITS.reactionsPerIpPerMinute),
  /** robots.txt and sitemaps kept in memory by their account's change mark, in MiB. */
  SITE_FILES_MB: z.coerce
    .number()
    .min(0)
    .max(4096)
    .default(DEFAULT_SITE.filesBytes / (1024 * 1024)),
  /**
   * The front proxy's internal location that sends recordings itself (nginx: `X-Accel-Redirect`),
   * e.g. `/internal/media/`: the server checks who may have one and names where its bytes are.
   */
  MEDIA_ACCEL_REDIRECT: z
    .string()
    .regex(/^\/[A-Za-z0-9_\-/]*\/$/, 'a path that begins and ends with /, e.g. /internal/media/')
    .max(200)
    .optional(),
  /** The directory recordings are kept in (one file each). */
  MEDIA_DIR: z.string().min(1).default(DEFAULT_MEDIA_DIR),
  /** The longest recording accepted, in seconds. */
  MEDIA_MAX_SECONDS: z.coerce.number().int().min(1).max(86_400).default(DEFAULT_MEDIA_LIMITS.maxSeconds),
  /** The largest recording accepted, in bytes, enforced while the bytes arrive. */
  MEDIA_MAX_BYTES: z.coerce.number().int().min(1024).max(1e12).default(DEFAULT_MEDIA_LIMITS.maxBytes),
  /** Threads measuring recordings at once; unset: one per core. */
  PROBE_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  /** Bytes one visitor's unposted uploads may hold (each counted as its length, or MEDIA_MAX_BYTES until known); unset: 2 × MEDIA_MAX_BYTES. */
  UPLOADS_MAX_PER_VISITOR_BYTES: z.coerce.number().int().min(1024).max(1e13).optional(),
  /** The same per account; unset: 20 × MEDIA_MAX_BYTES. */
  UPLOADS_MAX_PER_ACCOUNT_BYTES: z.coerce.number().int().min(1024).max(1e14).optional(),
  /** The same for all accounts together; unset: 100 × MEDIA_MAX_BYTES. */
  UPLOADS_MAX_TOTAL_BYTES: z.coerce.number().int().min(1024).max(1e15).optional(),
  /** Disk space a new upload must leave free under MEDIA_DIR (else 507). */
  UPLOADS_DISK_RESERVE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(1e15)
    .default(1024 * 1024 * 1024),
  /** Keep recordings and uploads in this S3-compatible bucket instead of MEDIA_DIR (shared by replicas). */
  MEDIA_S3_BUCKET: z.string().min(3).max(63).optional(),
  /** The S3 API's address (MinIO, Garage, R2 …); unset for AWS S3 itself. */
  MEDIA_S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  MEDIA_S3_REGION: z.string().min(1).default('us-east-1'),
  /** Credentials; unset: the AWS SDK's own chain (AWS_ACCESS_KEY_ID, a role, a profile). */
  MEDIA_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  MEDIA_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** Address the bucket in the path (`endpoint/bucket/key`), as MinIO and Garage expect. */
  MEDIA_S3_PATH_STYLE: ZBoolean.default(false),
  /** Answer a recording's URL with a 302 to a presigned link of 5 minutes (false: stream it through the server). */
  MEDIA_S3_REDIRECT: ZBoolean.default(true),
  /** Webhook endpoints may be plain http:// (development only). */
  WEBHOOK_ALLOW_HTTP: ZBoolean.default(false),
  /** Webhook endpoints may resolve to loopback, private or link-local addresses (tests, development). */
  WEBHOOK_ALLOW_PRIVATE: ZBoolean.default(false),
  /** How long a webhook endpoint has to answer. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** Multiplies the webhook retry schedule (fault tests shorten it; production leaves it at 1). */
  WEBHOOK_RETRY_SCALE: z.coerce.number().min(0.001).max(10).default(1),
  /**
   * The speech engine's base URL, up to its API's version (`http://127.0.0.1:8000/v1`): it is sent
   * each recording's audio at `<url>/audio/transcriptions` (OpenAI's protocol). Unset: no transcripts.
   */
  TRANSCRIBE_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** The engine's model (`whisper-1`, `Systran/faster-whisper-small`, whisper.cpp's ignores it). */
  TRANSCRIBE_MODEL: z.string().min(1).max(200).default('whisper-1'),
  /** Sent as `Authorization: Bearer …` when set. */
  TRANSCRIBE_API_KEY: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** The language spoken (ISO 639-1: `en`); unset: the engine detects it. */
  TRANSCRIBE_LANGUAGE: z
    .string()
    .regex(/^[a-z]{2,3}$/, 'an ISO 639-1 code such as en')
    .optional(),
  /** How long the engine may take to answer one file of audio. */
  TRANSCRIBE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(600_000),
  /** The most one file of audio sent may weigh; longer audio goes in overlapping windows (OpenAI takes 25 MB). */
  TRANSCRIBE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(1e10)
    .default(24 * 1024 * 1024),
  /** Where the audio files wait while the engine takes them (deleted after). */
  TRANSCRIBE_DIR: z.string().min(1).default(join(tmpdir(), 'convo-transcripts')),
  /** Multiplies the transcripts' retry schedule (fault tests shorten it; production leaves it at 1). */
  TRANSCRIBE_RETRY_SCALE: z.coerce.number().min(0.001).max(10).default(1),
  /** Webhook events (with their deliveries and attempts) are kept this many days once done. */
  WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(DEFAULT_WEBHOOK_RETENTION_DAYS),
  /** With the server's autovacuum off: vacuum the queue tables this often (0: never). */
  QUEUE_VACUUM_SECONDS: z.coerce.number().min(0).max(3600).default(5),
  /** Live streams (a page following its conversation) one client address may hold open at once. */
  LIVE_STREAMS_PER_CLIENT: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_LIVE.perClient),
  /** Live streams one process holds at most; past it a new one is answered 503 (another replica takes it). */
  LIVE_STREAMS_MAX: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_LIVE.max),
  /** Live streams of one account's site one process holds at most, whatever their addresses. */
  LIVE_STREAMS_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(DEFAULT_LIVE.perAccount ?? 5_000),
  /** Pages of conversations kept in memory by their account's change mark, in MiB (0: none). */
  PAGE_CACHE_MB: z.coerce.number().min(0).max(4096).default(DEFAULT_PAGE_CACHE_MB),
  /** Check every answer against its operation's output schema (default: unless NODE_ENV=production). */
  CHECK_ANSWERS: ZBoolean.optional(),
  NODE_ENV: z.string().optional(),
});

export type Config = {
  database:
    | {
        kind: 'postgres';
        url: string;
        /** The listening connection's (LISTEN_DATABASE_URL, else url). */
        listenUrl: string;
        poolMax: number;
        statementTimeoutMs: number;
        namedStatements: boolean;
      }
    | { kind: 'pglite'; dataDir: string };
  host: string;
  port: number;
  logLevel: z.infer<typeof ZEnv>['LOG_LEVEL'];
  migrateOnStart: boolean;
  rateLimit: { limit: number; windowSeconds: number };
  /** The API host's HTTP surface: bodies, timeouts, batches, proxies, /metrics. */
  http: HttpSettings;
  /** The account sites: their forms' and reads' limits, their kept files. */
  site: SiteSettings;
  /** An answer not taken by then is cut off (Node's server). */
  sendTimeoutMs: number;
  mail: { smtpUrl: string | undefined; from: string };
  /** How long a notification mail waits for more messages. */
  notifyBatchSeconds: number;
  /** Reply by e-mail: the domain reply addresses are on (null: mail is not answered), their lifetime, the receivers'. */
  inbound: {
    domain: string | null;
    days: number;
    secret: string | undefined;
    maxBytes: number;
    perPersonPerHour: number;
    perAccountPerHour: number;
    smtp: { port: number; host: string; tls: { cert: string; key: string } | null } | null;
    imap: { url: string; intervalMs: number } | null;
    /** SPF, DKIM and DMARC checked, through these DNS servers (empty: the system's); null: not checked. */
    auth: { dnsServers: string[] } | null;
  };
  /** Where recordings are kept: MEDIA_DIR, or the S3 bucket when MEDIA_S3_BUCKET is set. */
  media: {
    dir: string;
    limits: MediaLimits;
    s3: S3Options | undefined;
    uploadQuotas: Partial<UploadQuotas>;
    probeThreads: number | undefined;
  };
  webhooks: { allowHttp: boolean; allowPrivate: boolean; timeoutMs: number; retryScale: number };
  webhookRetentionDays: number;
  /** The speech engine and the transcripts' job (TRANSCRIBE_*); null when TRANSCRIBE_URL is unset. */
  transcribe: TranscribeSettings | null;
  checkAnswers: boolean;
  pageCacheBytes: number;
  queueVacuumMs: number;
  live: LiveOptions;
};

/** The speech engine (TRANSCRIBE_*): media/openai-transcriber.ts, workers/transcripts.ts. */
export interface TranscribeSettings {
  url: string;
  model: string;
  apiKey: string | undefined;
  language: string | undefined;
  timeoutMs: number;
  maxBytes: number;
  dir: string;
  retryScale: number;
}

const MIB = 1024 * 1024;

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = ZEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const together = [
    !e.INBOUND_SMTP_TLS_CERT !== !e.INBOUND_SMTP_TLS_KEY &&
      '  INBOUND_SMTP_TLS_CERT, INBOUND_SMTP_TLS_KEY: give both, or neither',
    !e.INBOUND_MAIL_DOMAIN &&
      (e.INBOUND_SMTP_PORT !== undefined || e.INBOUND_MAIL_SECRET || e.INBOUND_IMAP_URL) &&
      '  INBOUND_MAIL_DOMAIN: a mail receiver (INBOUND_SMTP_PORT, INBOUND_MAIL_SECRET, INBOUND_IMAP_URL) needs the domain its reply addresses are on',
  ].filter((line) => typeof line === 'string');
  if (together.length > 0) throw new ConfigError(`invalid configuration:\n${together.join('\n')}`);
  return {
    database: e.DATABASE_URL
      ? {
          kind: 'postgres',
          url: e.DATABASE_URL,
          listenUrl: e.LISTEN_DATABASE_URL ?? e.DATABASE_URL,
          poolMax: e.DB_POOL_MAX,
          statementTimeoutMs: e.STATEMENT_TIMEOUT_MS,
          namedStatements: e.DB_NAMED_STATEMENTS,
        }
      : { kind: 'pglite', dataDir: e.DATA_DIR },
    host: e.HOST,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    migrateOnStart: e.MIGRATE_ON_START,
    rateLimit: { limit: e.RATE_LIMIT, windowSeconds: e.RATE_LIMIT_WINDOW_S },
    http: {
      body: { maxBytes: e.MAX_BODY_BYTES, timeoutMs: e.BODY_TIMEOUT_MS },
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      maxBatch: e.TRPC_MAX_BATCH,
      proxies: { hops: e.TRUST_PROXY, publicUrl: e.PUBLIC_URL, ipv6Prefix: e.CLIENT_IPV6_PREFIX },
      metricsToken: e.METRICS_TOKEN,
    },
    sendTimeoutMs: e.SEND_TIMEOUT_MS,
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    notifyBatchSeconds: e.NOTIFY_BATCH_MINUTES * 60,
    inbound: {
      domain: e.INBOUND_MAIL_DOMAIN ?? null,
      days: e.REPLY_ADDRESS_DAYS,
      secret: e.INBOUND_MAIL_SECRET,
      maxBytes: e.INBOUND_MAIL_MAX_BYTES,
      perPersonPerHour: e.INBOUND_MAIL_LIMIT_PER_PERSON,
      perAccountPerHour: e.INBOUND_MAIL_LIMIT_PER_ACCOUNT,
      smtp:
        e.INBOUND_SMTP_PORT === undefined
          ? null
          : {
              port: e.INBOUND_SMTP_PORT,
              host: e.INBOUND_SMTP_HOST ?? e.HOST,
              tls:
                e.INBOUND_SMTP_TLS_CERT && e.INBOUND_SMTP_TLS_KEY
                  ? { cert: e.INBOUND_SMTP_TLS_CERT, key: e.INBOUND_SMTP_TLS_KEY }
                  : null,
            },
      auth: e.INBOUND_MAIL_AUTH ? { dnsServers: e.INBOUND_MAIL_AUTH_DNS?.split(',') ?? [] } : null,
      imap: e.INBOUND_IMAP_URL ? { url: e.INBOUND_IMAP_URL, intervalMs: e.INBOUND_IMAP_INTERVAL_S * 1000 } : null,
    },
    site: {
      filesBytes: Math.round(e.SITE_FILES_MB * MIB),
      recordingsHandOff: e.MEDIA_ACCEL_REDIRECT ?? null,
      limits: {
        perIpPerMinute: e.FORM_LIMIT_PER_IP,
        perEmailPer15Minutes: e.FORM_LIMIT_PER_EMAIL,
        unconfirmedMailPerAccountPerHour: e.MAIL_LIMIT_PER_ACCOUNT,
        downloadsPerClient: e.MEDIA_DOWNLOADS_PER_CLIENT,
        downloadsMax: e.MEDIA_DOWNLOADS_MAX,
        readsPerIpPerMinute: e.PAGE_LIMIT_PER_IP,
        playsPerIpPerMinute: e.PLAY_LIMIT_PER_IP,
        reactionsPerIpPerMinute: e.REACTION_LIMIT_PER_IP,
      },
    },
    media: {
      dir: e.MEDIA_DIR,
      limits: { maxSeconds: e.MEDIA_MAX_SECONDS, maxBytes: e.MEDIA_MAX_BYTES },
      probeThreads: e.PROBE_THREADS,
      uploadQuotas: {
        ...(e.UPLOADS_MAX_PER_VISITOR_BYTES === undefined ? {} : { perVisitorBytes: e.UPLOADS_MAX_PER_VISITOR_BYTES }),
        ...(e.UPLOADS_MAX_PER_ACCOUNT_BYTES === undefined ? {} : { perAccountBytes: e.UPLOADS_MAX_PER_ACCOUNT_BYTES }),
        ...(e.UPLOADS_MAX_TOTAL_BYTES === undefined ? {} : { totalBytes: e.UPLOADS_MAX_TOTAL_BYTES }),
        diskReserveBytes: e.UPLOADS_DISK_RESERVE_BYTES,
      },
      s3: e.MEDIA_S3_BUCKET
        ? {
            bucket: e.MEDIA_S3_BUCKET,
            redirect: e.MEDIA_S3_REDIRECT,
            client: {
              region: e.MEDIA_S3_REGION,
              forcePathStyle: e.MEDIA_S3_PATH_STYLE,
              ...(e.MEDIA_S3_ENDPOINT ? { endpoint: e.MEDIA_S3_ENDPOINT } : {}),
              ...(e.MEDIA_S3_ACCESS_KEY_ID && e.MEDIA_S3_SECRET_ACCESS_KEY
                ? {
                    credentials: {
                      accessKeyId: e.MEDIA_S3_ACCESS_KEY_ID,
                      secretAccessKey: e.MEDIA_S3_SECRET_ACCESS_KEY,
                    },
                  }
                : {}),
            },
          }
        : undefined,
    },
    webhooks: {
      allowHttp: e.WEBHOOK_ALLOW_HTTP,
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryScale: e.WEBHOOK_RETRY_SCALE,
    },
    transcribe: e.TRANSCRIBE_URL
      ? {
          url: e.TRANSCRIBE_URL,
          model: e.TRANSCRIBE_MODEL,
          apiKey: e.TRANSCRIBE_API_KEY,
          language: e.TRANSCRIBE_LANGUAGE,
          timeoutMs: e.TRANSCRIBE_TIMEOUT_MS,
          maxBytes: e.TRANSCRIBE_MAX_BYTES,
          dir: e.TRANSCRIBE_DIR,
          retryScale: e.TRANSCRIBE_RETRY_SCALE,
        }
      : null,
    checkAnswers: e.CHECK_ANSWERS ?? e.NODE_ENV !== 'production',
    webhookRetentionDays: e.WEBHOOK_RETENTION_DAYS,
    pageCacheBytes: Math.round(e.PAGE_CACHE_MB * MIB),
    queueVacuumMs: e.QUEUE_VACUUM_SECONDS * 1000,
    live: { perClient: e.LIVE_STREAMS_PER_CLIENT, max: e.LIVE_STREAMS_MAX, perAccount: e.LIVE_STREAMS_PER_ACCOUNT },
  };
}
