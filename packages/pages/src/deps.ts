import type {
  Authenticated,
  ConversationStore,
  InboxStore,
  IntakePageAdminStore,
  IntakeStore,
  LiveEvent,
  LiveScope,
  MailOutbox,
  MediaDeps,
  MediaReferences,
  MemberStore,
  MessageTemplateStore,
  ModerationStore,
  NotificationStore,
  PeopleStore,
  PlayBuffer,
  PlayStore,
  ReactionStore,
  ReceivedFile,
  ReplyStore,
  SiteSecrets,
  SiteStore,
  TeamStore,
  TranscriptStore,
  UpdateConversationStore,
  Uploads,
  VisitorLimits,
  WorkflowStore,
} from '@convo/domain';
import type { KeptFiles } from './kept-files.ts';

/*
 * What the server hands an account's site: its ports and limits (SiteDeps), and each request's
 * client (SiteVisit). What a request carries through Hono is request.ts; cookies, cookies.ts.
 */

/**
 * A form body as the server read it, or why it could not (too large, not a form, not UTF-8, the
 * media store down …). A form that takes a recording may carry one `file`.
 */
export type FormResult =
  | { ok: true; fields: Map<string, string[]>; file?: ReceivedFile }
  | { ok: false; status: 400 | 403 | 408 | 413 | 415 | 503; message: string };

export interface SiteLimits {
  /** Form posts (replies, sign-in requests) per client address per minute; 0: no limit. */
  perIpPerMinute: number;
  /** Page reads (GET and HEAD, assets aside) per client address per minute; 0: no limit. */
  readsPerIpPerMinute: number;
  /** Plays reported by the pages' players (receipts' beacons) per client address per minute; 0: no limit. */
  playsPerIpPerMinute: number;
  /** Reactions added or taken back on the pages per client address per minute; 0: no limit. */
  reactionsPerIpPerMinute: number;
  /** Sign-in links and replies per e-mail address per 15 minutes; 0: no limit. */
  perEmailPer15Minutes: number;
  /** Mail to addresses nobody has confirmed (sign-in links, confirmations) per account per hour; 0: no limit. */
  unconfirmedMailPerAccountPerHour: number;
  /** Recordings sent to one client at once; 0: no limit. */
  downloadsPerClient: number;
  /** Recordings this process sends at once; 0: no limit. */
  downloadsMax: number;
}

/**
 * The limits a site has unless the operator sets others (`FORM_LIMIT_PER_IP`, `FORM_LIMIT_PER_EMAIL`,
 * `PAGE_LIMIT_PER_IP`, `PLAY_LIMIT_PER_IP`, `REACTION_LIMIT_PER_IP`).
 */
export const DEFAULT_SITE_LIMITS: SiteLimits = {
  perIpPerMinute: 30,
  perEmailPer15Minutes: 5,
  unconfirmedMailPerAccountPerHour: 500,
  downloadsPerClient: 64,
  downloadsMax: 1_000,
  readsPerIpPerMinute: 1_200,
  playsPerIpPerMinute: 120,
  reactionsPerIpPerMinute: 60,
};

/** One reader's live stream, as a route asks for it. */
export interface LiveStreamRequest {
  scope: LiveScope;
  /** Streams are counted per client address. */
  clientIp: string;
  /** Where the reader was (Last-Event-ID, or the position the page was rendered at); null: now. */
  after: string | null;
  /** The person reading (signed in, or whose start this device's pass holds); null: nobody known. */
  userId: number | null;
  /** A start's pass reads it (no person known): its rule is asked again too, for the team may end it. */
  passHolder?: boolean;
  /** Asks the page's rule again (a session ended, a member taken out): false ends the stream. */
  stillAllowed(): Promise<boolean>;
  /** A stream of a whole account (the team's inbox): whether this event's conversation may be told of. */
  admits?(e: LiveEvent): Promise<boolean>;
  /** What the browser is told of an event (its `event:` and `data:`); null: nothing. */
  describe(e: LiveEvent): { event: string; data: Record<string, unknown> } | null;
}

export type OpenedStream =
  | { body: ReadableStream<Uint8Array> }
  | { refused: 429 | 503; retryAfterSeconds: number; reason: string };

/** The live streams of this process (the server's hub). */
export interface LiveStreams {
  /**
   * A position a page rendered now can be followed from (at or before now: a stream from it may
   * repeat what the page shows, which the page skips); null until the process knows one.
   */
  position(): string | null;
  open(request: LiveStreamRequest): Promise<OpenedStream>;
}

export interface SiteDeps {
  site: SiteStore;
  people: PeopleStore;
  replies: ReplyStore;
  intake: IntakeStore;
  /** The team's intake pages and workflows, as the API manages them. */
  intakePageAdmin: IntakePageAdminStore;
  workflows: WorkflowStore;
  /** The team's message templates, as the API keeps them. */
  messageTemplates: MessageTemplateStore;
  members: MemberStore;
  /** Where the team's own starts are written, as create_conversation writes the API's. */
  conversations: ConversationStore;
  /** A conversation's title and who may see and post in it, as update_conversation changes them. */
  updateConversationStore: UpdateConversationStore;
  /** Which recordings a message still holds, when a deleted conversation's are removed. */
  mediaReferences: MediaReferences;
  notifications: NotificationStore;
  /** The site's signing key (mail links, passes, form tokens). */
  secrets: SiteSecrets;
  inbox: InboxStore;
  /** The account's team, as get_team and update_team_member change it. */
  teamStore: TeamStore;
  moderation: ModerationStore;
  /** The played receipts: the pages show them. */
  plays: PlayStore;
  /** Where the players' beacons leave their plays, to be kept in batches. */
  playBuffer: Pick<PlayBuffer, 'add'>;
  /** Recordings' transcripts: captions, the words under each recording, the team's retry. */
  transcripts: TranscriptStore;
  /** A speech engine is configured (TRANSCRIBE_URL): a transcript not made yet is being made. */
  transcribing: boolean;
  /** Reactions on messages: the pages' forms keep them and show them. */
  reactions: ReactionStore;
  outbox: MailOutbox;
  limits: VisitorLimits;
  /** Page reads per client address, shared by every process (blocks of quota claimed, not a row a read). */
  readLimits: VisitorLimits;
  /** robots.txt and the sitemaps, kept per change of their account. */
  files: KeptFiles;
  /**
   * Reads a POST's form body within the server's limits; with `upload` (the reply form), also as
   * multipart/form-data, its one recording (the file in `field`) streamed into the media store
   * under a new key of the account.
   */
  readForm(
    req: Request,
    upload?: {
      accountId: number;
      field: string;
      /** Asked with the fields before the file, before a byte of it is kept; false refuses the form. */
      admit?: (fields: Map<string, string[]>) => Promise<boolean>;
    },
  ): Promise<FormResult>;
  /** Where recordings are kept, how they are measured, and their limits. */
  media: MediaDeps;
  /**
   * The front proxy's internal location for recordings (`MEDIA_ACCEL_REDIRECT`, e.g. `/internal/media/`):
   * set, a recording's answer names where its bytes are (`X-Accel-Redirect`) and the proxy sends
   * them; null, the server sends them.
   */
  recordingsHandOff: string | null;
  uploads: Uploads;
  /** New messages and member changes, pushed to the pages that show them. */
  live: LiveStreams;
  /** The account an API token acts for (a private recording may be fetched with it); null if none. */
  authenticate(token: string): Promise<Authenticated | null>;
  /** True when the error means the database cannot be reached (answered 503, not 500). */
  isUnavailable(err: unknown): boolean;
  /** Where a failure the visitor cannot cause is reported. */
  onError(err: unknown): void;
  rates: SiteLimits;
}

/** One request to an account's site, as the server hands it over and learns back what answered. */
export interface SiteVisit {
  /**
   * The client as the per-address limits count it (or 'unknown'): its IPv4 address, or its IPv6
   * address's network (`CLIENT_IPV6_PREFIX` bits, a /64 unless the operator says otherwise).
   */
  clientIp: string;
  /** Set when answered: the route that answered, as /metrics counts it (`site:/c/:slug`, or `site:other`). */
  label?: string;
}
