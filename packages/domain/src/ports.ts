import type { TeamRole } from './access.ts';
import type { LookupCriteria } from './lookup.ts';
import type { MessageType, StoredMedia } from './media.ts';
import type { PageWindow } from './paging.ts';
import type { EpochMicros } from './time.ts';
import type { AccountAddress } from './urls.ts';
import type { WebhookEventType } from './webhooks.ts';
import type { WorkflowCopy, WorkflowStep } from './workflows.ts';

/** The account a request acts for, as resolved from its API token. */
export interface AccountContext extends AccountAddress {
  id: number;
  name: string;
  defaults: ConversationSettings;
  titleTemplate: string;
  owner: UserRecord | null;
}

/** An API token that resolved to its account. */
export interface Authenticated {
  tokenId: number;
  /** The account's own requests per rate-limit window; null: the server's default. */
  rateLimit: number | null;
  account: AccountContext;
  /**
   * The account's change mark, read with the token (so before any data the request reads): it
   * grows with every change to what the API answers for the account. Conditional requests use it.
   */
  changeMark: string;
}

/** What a response says about its token's quota (the RateLimit-* headers). */
export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends and the quota is whole again. */
  resetSeconds: number;
}

export interface ConversationSettings {
  anyoneCanPost: boolean;
  allowAnonymousMessages: boolean;
  allowSearchEngines: boolean;
}

export interface UserRecord {
  id: number;
  email: string;
  name: string;
}

export interface TagRecord {
  id: number;
  name: string;
}

/** A workflow as an intake page applies it: the steps of it that run (see workflows.ts). */
export interface WorkflowRecord {
  id: number;
  name: string;
  steps: WorkflowStep[];
}

export type MessageAuthorRecord = { anonymous: true } | ({ anonymous: false } & UserRecord);

export interface MessageRecord {
  id: number;
  messageType: MessageType;
  recordedDurationSeconds: number;
  author: MessageAuthorRecord;
  text: string;
  /** A recording's URL elsewhere (brought in by a seed or an import); null for one kept here. */
  downloadMediaUrl: string | null;
  /** True when this server keeps the recording: its URL is the account's `/media/…`. */
  hostedMedia: boolean;
}

/**
 * A conversation as the store holds it: the one record. What each reader needs of it is a Pick of
 * it (`ConversationAccess`, `ConversationPageRecord`, `MessagePageRecord`), so a member means the
 * same thing wherever it appears.
 */
export interface ConversationRecord extends ConversationSettings {
  id: number;
  title: string;
  slug: string;
  viaPrimaryIntakePage: boolean;
  intakePageId: number | null;
  /** The workflow as it was copied from the intake page at creation, with its steps' states; null when none applied. */
  workflow: WorkflowCopy | null;
  createdAt: EpochMicros;
  users: UserRecord[];
  tags: TagRecord[];
  messages: MessageRecord[];
}

export interface IntakePageRecord {
  id: number;
  primary: boolean;
  workflow: WorkflowRecord | null;
}

/** A conversation about to be stored: everything but what the database assigns. */
export interface NewConversation extends ConversationSettings {
  /** When it is created: the clock the default title was rendered from. */
  createdAt: EpochMicros;
  title: string;
  slug: string;
  viaPrimaryIntakePage: boolean;
  intakePageId: number | null;
  workflow: WorkflowCopy | null;
  memberIds: number[];
}

export interface StoredConversation {
  id: number;
}

/**
 * An Idempotency-Key guarding a create: the request it was first used with (in a canonical form)
 * and how the create's answer is rendered, so the store can keep that answer beside the key.
 */
export interface IdempotencyGuard {
  key: string;
  request: string;
  answer(stored: StoredConversation): unknown;
}

/** A guarded insert either stores, or finds the key already used: for the same request, or another. */
export type GuardedInsert =
  | { kind: 'stored'; stored: StoredConversation }
  | { kind: 'replay'; answer: unknown }
  | { kind: 'key_reused' };

/** Conversation storage, always scoped to one account. */
export interface ConversationStore {
  findOne(accountId: number, criteria: LookupCriteria): Promise<ConversationRecord | null>;
  /** One page, newest first, and whether any conversation lies beyond it. */
  listPage(accountId: number, window: PageWindow): Promise<{ records: ConversationRecord[]; hasMore: boolean }>;
  /** Throws SlugTakenError when the account already has the slug (ignoring case). */
  insert(accountId: number, conversation: NewConversation): Promise<StoredConversation>;
  /**
   * insert, at most once per key: the key is claimed in the insert's transaction, so a concurrent
   * request with the same key waits for this one and then finds the key used.
   */
  insertOnce(accountId: number, conversation: NewConversation, once: IdempotencyGuard): Promise<GuardedInsert>;
}

/** A conversation's members, changed by the team or the API (each change moves the change mark when it changes anything). */
export interface MemberStore {
  /**
   * Makes the address's user a member of the conversation with this slug key, first making the
   * user with `name` when the address is nobody's and a name is given. Null: no such conversation.
   */
  addMember(
    accountId: number,
    slugKey: string,
    person: { email: string; name: string | null },
  ): Promise<MemberChange | null>;
  /** Takes the address's user out of the conversation's members. Null: no such conversation. */
  removeMember(accountId: number, slugKey: string, email: string): Promise<MemberChange | null>;
  /** Ends the access of every device that started the conversation (their passes issued until now). */
  endPasses(accountId: number, conversationId: number): Promise<void>;
}

/** What a change of members found and did. */
export interface MemberChange {
  conversationId: number;
  title: string;
  slug: string;
  /** The address's user, with their address as stored; null when the address is nobody's (and nobody was made). */
  person: { id: number; email: string } | null;
  /** Whether the members changed (and with them the account's change mark). */
  changed: boolean;
}

/** An account as its own site knows it: found by the host a request came to, not by a token. */
export interface SiteAccount extends AccountAddress {
  id: number;
  name: string;
}

/** A message as a page shows it: with the time it was posted and whether its author is on the team. */
export interface PageMessageRecord extends MessageRecord {
  createdAt: EpochMicros;
  /** The author's place on the account's team; null for a participant or an anonymous message. */
  authorTeamRole: TeamRole | null;
  /** An unconfirmed start's name (the message is anonymous until its address is confirmed); else null. */
  claimedName: string | null;
}

/**
 * Who may see a conversation and post to it, and where it lives: what every page and reply reads
 * of it first, before anything it holds.
 */
export type ConversationAccess = Pick<ConversationRecord, 'id' | 'slug' | keyof ConversationSettings> & {
  memberIds: number[];
  /**
   * Since when (epoch milliseconds) the passes of the devices that started it open it: the team
   * ended the older ones' access. Null: every pass within its lifetime.
   */
  passesValidAfter: number | null;
};

/**
 * A conversation as one of its pages shows it: the page's messages oldest first, each with its
 * time, and where they sit among all of its messages.
 */
export interface ConversationPageRecord
  extends Pick<
    ConversationRecord,
    'id' | 'title' | 'slug' | 'createdAt' | 'users' | 'tags' | keyof ConversationSettings
  > {
  messages: PageMessageRecord[];
  /** How many messages the conversation has in all. */
  messageCount: number;
  /** The position (0-based, oldest first) of the page's first message. */
  start: number;
  /** The first message's text (link previews describe the conversation by it), or null. */
  firstText: string | null;
  /** Ids of the messages just before the page, oldest first, so their anchors land here too. */
  earlierIds: number[];
}

/** Which messages of a conversation a page holds. */
export interface MessageWindow {
  /** Position of the first (0-based, oldest first); null: the last `size` messages. */
  start: number | null;
  size: number;
  /** How many ids of the messages before the window to return (earlierIds). */
  earlierIds: number;
}

/** One message and what its embed needs of its conversation (who may see it, where it lives). */
export interface MessagePageRecord {
  conversation: ConversationAccess & Pick<ConversationRecord, 'title'>;
  message: PageMessageRecord;
}

/** A message's kept recording, and who may see the conversation it is in. */
export interface MessageMedia {
  conversation: ConversationAccess;
  key: string;
  contentType: string;
  bytes: number;
}

/** What the account's own site reads; every read but the first is scoped to the account. */
export interface SiteStore {
  /** The account whose host is one of `origins`, or null. */
  accountByHost(origins: readonly string[]): Promise<SiteAccount | null>;
  /**
   * Who may see and post to a conversation, and where it lives (no messages): by exact slug,
   * ignoring case (no fallback to the latest). Read before anything else of it.
   */
  conversationAccess(accountId: number, slugKey: string): Promise<ConversationAccess | null>;
  /** The same, by the conversation's id. */
  conversationAccessById(accountId: number, conversationId: number): Promise<ConversationAccess | null>;
  /** The recording this server keeps for a message not hidden, or null. */
  mediaOf(accountId: number, messageId: number): Promise<MessageMedia | null>;
  /** A conversation with one window of its messages (found by id, after its access was checked). */
  conversationPage(
    accountId: number,
    conversationId: number,
    window: MessageWindow,
  ): Promise<ConversationPageRecord | null>;
  messageById(accountId: number, messageId: number): Promise<MessagePageRecord | null>;
  /** Slugs of conversations that may be indexed (public and allowing search engines), newest first unless told. */
  indexableSlugs(
    accountId: number,
    limit: number,
    order?: { oldestFirst?: boolean; offset?: number },
  ): Promise<string[]>;
  /** How many conversations may be indexed. */
  indexableCount(accountId: number): Promise<number>;
  /** The account's change mark (see Authenticated.changeMark): files built from its data are kept by it. */
  changeMark(accountId: number): Promise<string>;
}

/** A reply that waits for its author to confirm the link mailed to the address they gave. */
export interface PendingReply {
  conversationId: number;
  text: string;
  submitKey: string | null;
  /** A recording sent with it, kept until the link is opened (or it expires). */
  media?: StoredMedia | undefined;
}

/** A person signed in on an account's site. */
export interface SignedIn {
  user: UserRecord;
  /** The user's place on the account's team; null: a participant. */
  teamRole: TeamRole | null;
  /** The session's expiry moved (it slides): the cookie should be sent again. */
  renewed: boolean;
}

/** A sign-in link as it was made: for an address, with the name a new person gave and a reply that waits. */
export interface SignInLinkRecord {
  email: string;
  /** The name given with a reply, for when the address is nobody's yet. */
  name: string | null;
  returnPath: string;
  pending: PendingReply | null;
  /** An unconfirmed start's message, which confirming the link puts the address's person's name on. */
  claim?: number | null;
}

/**
 * The people of an account's site: its users as the pages know them, their sessions and one-time
 * sign-in links. Tokens are given in the clear and stored only hashed. Every method is scoped to
 * the account.
 */
export interface PeopleStore {
  userByEmail(accountId: number, email: string): Promise<UserRecord | null>;
  /** Makes a new user of the account; null when the e-mail is already a user's (ignoring case). */
  register(accountId: number, name: string, email: string): Promise<UserRecord | null>;
  createSignInLink(accountId: number, token: string, link: SignInLinkRecord & { ttlSeconds: number }): Promise<void>;
  /** A link that can still be used, and the user its address belongs to (if any), without spending it. */
  peekSignInLink(accountId: number, token: string): Promise<(SignInLinkRecord & { user: UserRecord | null }) | null>;
  /** Spends a link: once, and only before it expires; null otherwise. */
  useSignInLink(accountId: number, token: string): Promise<SignInLinkRecord | null>;
  createSession(accountId: number, userId: number, token: string, ttlSeconds: number): Promise<void>;
  /** The session's user, sliding its expiry to ttlSeconds from now at most once a day; null when unknown or expired. */
  session(accountId: number, token: string, ttlSeconds: number): Promise<SignedIn | null>;
  endSession(accountId: number, token: string): Promise<void>;
  /** Ends every session of the user (every device, every replica: sessions live in the database). */
  endAllSessions(accountId: number, userId: number): Promise<void>;
}

/** Where replies are written. */
export interface ReplyStore {
  /**
   * Adds a message to the conversation (text, with a recording when `media` is given); with a
   * submitKey the account already used, nothing is written and that message's id comes back
   * (`created` false).
   */
  insert(
    accountId: number,
    conversationId: number,
    reply: { authorId: number | null; text: string; submitKey: string | null; media?: StoredMedia | undefined },
  ): Promise<{ id: number; created: boolean }>;
  /**
   * Puts `authorId` on an unconfirmed start's message (its name given under the address they
   * confirmed) and makes them a member of its conversation; null when it is no longer unconfirmed.
   */
  claim(accountId: number, messageId: number, authorId: number): Promise<{ id: number } | null>;
  /** The message a form token posted in the conversation, if it did. */
  posted(accountId: number, conversationId: number, submitKey: string): Promise<{ id: number } | null>;
}

/** Mail is queued in the database and sent by a worker, so a request never waits for SMTP. */
/** A mail as the domain writes it: plain text (the sender adds an escaped HTML part). */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  /** Headers beside From, To and Subject, such as List-Unsubscribe (values on one line). */
  headers?: Record<string, string> | undefined;
}

export interface MailOutbox {
  enqueue(accountId: number, mail: OutgoingMail): Promise<void>;
}

/** Counts form submissions per key (a client address, an e-mail) in fixed windows shared by every process. */
export interface VisitorLimits {
  take(key: string, limit: number, windowSeconds: number): Promise<{ allowed: boolean; resetSeconds: number }>;
}

export interface IntakePageStore {
  findById(accountId: number, id: number): Promise<IntakePageRecord | null>;
  findPrimary(accountId: number): Promise<IntakePageRecord | null>;
}

/** An account's webhook endpoint, as its subscribers see it. */
export interface WebhookEndpointRecord {
  id: number;
  url: string;
  events: WebhookEventType[];
  createdAt: Date;
  /** When its deliveries began failing without a success since; null when they succeed. */
  failingSince: Date | null;
  /** When it was disabled for failing too long; null while it is enabled. */
  disabledAt: Date | null;
  /** Deliveries waiting for their next attempt. */
  pending: number;
}

export interface WebhookEndpointStore {
  /**
   * Stores a new endpoint, unless the account already has `max` of them (then null); the check
   * and the insert are one step, so concurrent subscriptions cannot pass the limit together.
   */
  add(
    accountId: number,
    endpoint: { url: string; events: WebhookEventType[]; secret: string },
    max: number,
  ): Promise<WebhookEndpointRecord | null>;
  list(accountId: number): Promise<WebhookEndpointRecord[]>;
  /** Deletes the endpoint and its pending deliveries; false when the account has no such endpoint. */
  remove(accountId: number, id: number): Promise<boolean>;
}

/** Where a webhook may be sent: the transport's network policy (schemes, addresses) decides. */
export interface WebhookTargets {
  /** The URL as it will be stored, or why it is refused (not https, resolves to a private address…). */
  check(url: string): Promise<{ ok: true; url: string } | { ok: false; reason: string }>;
}

/** Raised by a ConversationStore when the slug's uniqueness constraint refuses an insert. */
export class SlugTakenError extends Error {
  constructor() {
    super('slug already used in this account');
    this.name = 'SlugTakenError';
  }
}
