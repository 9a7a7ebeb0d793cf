import { createHash, randomBytes } from 'node:crypto';
import type {
  Authenticated,
  InboxStore,
  IntakePageAdminStore,
  IntakeStore,
  LiveEvent,
  LiveScope,
  MailOutbox,
  MediaDeps,
  MemberStore,
  ModerationStore,
  NotificationStore,
  PeopleStore,
  ReplyStore,
  SignedIn,
  SiteAccount,
  SiteStore,
  Viewer,
  VisitorLimits,
  WorkflowStore,
} from '@convo/domain';
import type { Context } from 'hono';
import type { KeptFiles } from './kept-files.ts';

/*
 * What every part of an account's site shares: what the server hands it (SiteDeps, SiteVisit),
 * what each request carries through Hono (SiteEnv), and the site's few secrets and cookies.
 */

/** A recording that came with a form, kept in the media store under `key` (not measured yet). */
export interface ReceivedFile {
  key: string;
  bytes: number;
}

/**
 * A form body as the server read it, or why it could not (too large, not a form, not UTF-8, the
 * media store down …). A form that takes a recording may carry one `file`.
 */
export type FormResult =
  | { ok: true; fields: Map<string, string[]>; file?: ReceivedFile }
  | { ok: false; status: 400 | 403 | 408 | 413 | 415 | 503; message: string };

/** Whose a resumable upload is: a visitor of an account, as a hash of their cookie (never the cookie). */
export interface UploadVisitor {
  accountId: number;
  owner: string;
}

/** Why an upload is refused, in words for a person, with its status. */
export interface UploadRefusal {
  status: 400 | 403 | 404 | 413 | 429 | 503;
  message: string;
}

/**
 * Resumable uploads of recordings (tus 1.0 at `/uploads`): each belongs to the visitor who made it
 * and to one conversation they may reply to; an upload of anyone else is answered as missing.
 */
export interface Uploads {
  /**
   * Answers a tus request (POST creates, HEAD, PATCH, DELETE) for `visitor`. A creation asks
   * `admit`, with the metadata the client sent, which conversation the upload is for (its id).
   */
  handle(
    req: Request,
    visitor: UploadVisitor,
    admit: (metadata: Record<string, string | null>) => Promise<number | UploadRefusal>,
  ): Promise<Response>;
  /**
   * The finished upload `id` of `visitor` for `conversationId`, kept in the media store under a
   * new key (not measured yet) and gone from the uploads; or why not.
   */
  take(id: string, visitor: UploadVisitor, conversationId: number): Promise<ReceivedFile | UploadRefusal>;
}

/** What an upload's id looks like (the tus server's own naming). */
export const UPLOAD_ID = /^[0-9a-f]{32}$/;

export interface SiteLimits {
  /** Form posts (replies, sign-in requests) per client address per minute; 0: no limit. */
  perIpPerMinute: number;
  /** Page reads (GET and HEAD, assets aside) per client address per minute; 0: no limit. */
  readsPerIpPerMinute: number;
  /** Sign-in links and replies per e-mail address per 15 minutes; 0: no limit. */
  perEmailPer15Minutes: number;
  /** Mail to addresses nobody has confirmed (sign-in links, confirmations) per account per hour; 0: no limit. */
  unconfirmedMailPerAccountPerHour: number;
  /** Recordings sent to one client at once; 0: no limit. */
  downloadsPerClient: number;
  /** Recordings this process sends at once; 0: no limit. */
  downloadsMax: number;
}

/** The limits a site has unless the operator sets others (`FORM_LIMIT_PER_IP`, `FORM_LIMIT_PER_EMAIL`, `PAGE_LIMIT_PER_IP`). */
export const DEFAULT_SITE_LIMITS: SiteLimits = {
  perIpPerMinute: 30,
  perEmailPer15Minutes: 5,
  unconfirmedMailPerAccountPerHour: 500,
  downloadsPerClient: 64,
  downloadsMax: 1_000,
  readsPerIpPerMinute: 1_200,
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
  members: MemberStore;
  notifications: NotificationStore;
  inbox: InboxStore;
  moderation: ModerationStore;
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

export type SiteEnv = {
  Bindings: { account: SiteAccount; visit: SiteVisit };
  Variables: {
    /** The signed-in person, if any. */
    signedIn: SignedIn | null;
    /** The CSRF token every form of this response carries, bound to the session or visitor cookie. */
    csrf: string;
    /** A visitor cookie made for this request, set only if the page carries a form; null when there is one. */
    newVisitor: string | null;
  };
};

export type SiteContext = Context<SiteEnv>;

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;
export const SIGN_IN_LINK_TTL_SECONDS = 15 * 60;
export const SESSION_COOKIE = 'convo_session';
export const VISITOR_COOKIE = 'convo_visitor';

/** What a session or visitor cookie holds: 43 base64url characters. */
export const COOKIE_VALUE = /^[\w-]{43}$/;

/** 32 random bytes, base64url (43 characters): a cookie, session or sign-in secret. */
export const secret = () => randomBytes(32).toString('base64url');

/** The CSRF token bound to a session or visitor cookie. */
export const csrfFor = (cookie: string) => createHash('sha256').update(`csrf:${cookie}`).digest('base64url');

/** Whose uploads this visitor's requests reach: bound to the same cookie as their CSRF token. */
export const uploadVisitor = (accountId: number, csrfToken: string): UploadVisitor => ({
  accountId,
  owner: createHash('sha256').update(`upload:${csrfToken}`).digest('base64url'),
});

/** How every cookie of the site is set: the whole site, never to scripts, same-site, secure on https. */
export const cookieOptions = (account: SiteAccount) =>
  ({ path: '/', httpOnly: true, sameSite: 'Lax', secure: account.host.startsWith('https:') }) as const;

/** Who is viewing: the signed-in person, or nobody known (null). */
export const viewerOf = (c: SiteContext): Viewer =>
  c.var.signedIn ? { userId: c.var.signedIn.user.id, teamRole: c.var.signedIn.teamRole } : null;

/** A form field given once; a field sent twice is not trusted to mean either value. */
export const field = (fields: Map<string, string[]>, name: string): string | undefined => {
  const values = fields.get(name);
  return values?.length === 1 ? values[0] : undefined;
};
