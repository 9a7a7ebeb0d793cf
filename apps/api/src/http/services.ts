import type { PgMailOutbox, PgTranscriptStore, PgWebhookDeliveryStore, PgWorkflowJobs } from '@convo/db';
import type {
  InboxStore,
  IntakeStore,
  MediaDeps,
  ModerationStore,
  NotificationStore,
  PeopleStore,
  PlayBuffer,
  ReplyAddressStore,
  ReplyStore,
  SiteSecrets,
  SiteStore,
  VisitorLimits,
} from '@convo/domain';
import type { ProcedureServices } from '@convo/router';
import type { LiveHub } from '../live/hub.ts';
import type { Logger } from '../logger.ts';
import type { TusUploads } from '../media/uploads.ts';
import type { Metrics } from './metrics.ts';

/* What the HTTP core is given by the composition root (start/services.ts builds it). */

/** What the HTTP surface uses: the procedures' services, plus logs, metrics and readiness. */
export interface Services extends ProcedureServices {
  /** What the accounts' own sites (conversation pages) read. */
  site: SiteStore;
  people: PeopleStore;
  replies: ReplyStore;
  /** Intake pages as visitors use them: the page, and starts. */
  intake: IntakeStore;
  /** The site's signing key (mail links, passes, form tokens). */
  secrets: SiteSecrets;
  /** Who is told of new messages, and the pending mails that tell them. */
  notifications: NotificationStore;
  /** The plays the pages' beacons report, written in batches (flushed before the pool closes). */
  playBuffer: PlayBuffer;
  /** The team's inbox on the sites. */
  inbox: InboxStore;
  /** Hiding and deleting messages on the sites. */
  moderation: ModerationStore;
  /** Where recordings are kept and how they are measured. */
  media: MediaDeps;
  /** Resumable uploads of recordings (tus), swept with the recordings. */
  uploads: TusUploads;
  /** The queue itself, for the worker. */
  mailQueue: PgMailOutbox;
  /** Called after each queued mail, so a worker in this process sends it at once. */
  onMailQueued(listener: () => void): void;
  /** Called after each intake start, so a notification worker in this process tells the team and mails a visitor's link back at once. */
  onIntakeStarted(listener: () => void): void;
  visitorLimits: VisitorLimits;
  /** Page reads per client address on the sites (blocks of quota claimed in the database). */
  readLimits: VisitorLimits;
  /** The webhook deliveries table, for the worker and the metrics. */
  webhooks: PgWebhookDeliveryStore;
  /** Workflows' events and step jobs, for the worker. */
  workflowJobs: PgWorkflowJobs;
  /** Recordings' transcripts: the job's queue, and what pages read of them. */
  transcripts: PgTranscriptStore;
  /** The addresses notification mails may be answered at, and the mails taken in at them. */
  replyAddresses: ReplyAddressStore;
  /** A speech engine is configured (TRANSCRIBE_URL). */
  transcribing: boolean;
  /** The live streams of this process (the pages' event streams), woken by the listener. */
  live: LiveHub;
  logger: Logger;
  metrics: Metrics;
  /** Null when the database answers and every migration is applied; else what is wrong. */
  notReady(): Promise<string | null>;
  /** True while requests are waiting for a connection of the pool: background work then waits. */
  databaseBusy(): Promise<boolean>;
}
