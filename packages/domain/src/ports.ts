import type { LookupCriteria } from './lookup.ts';
import type { PageWindow } from './paging.ts';
import type { EpochMicros } from './time.ts';
import type { AccountAddress } from './urls.ts';
import type { WebhookEventType } from './webhooks.ts';

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

export interface WorkflowRecord {
  id: number;
  name: string;
  steps: unknown[];
}

export type MessageAuthorRecord = { anonymous: true } | ({ anonymous: false } & UserRecord);

export interface MessageRecord {
  id: number;
  messageType: string;
  recordedDurationSeconds: number;
  author: MessageAuthorRecord;
  text: string;
  downloadMediaUrl: string | null;
}

export interface ConversationRecord extends ConversationSettings {
  id: number;
  title: string;
  slug: string;
  viaPrimaryIntakePage: boolean;
  intakePageId: number | null;
  /** The workflow as it was copied from the intake page at creation; null when none applied. */
  workflow: WorkflowRecord | null;
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
  workflow: WorkflowRecord | null;
  memberIds: number[];
}

export interface StoredConversation {
  id: number;
}

/**
 * An Idempotency-Key guarding a create: the request it was first used with (in a canonical form)
 * and how the create's answer is rendered, so the store can keep that answer beside the key.
 */
export interface OnceOnly {
  key: string;
  request: string;
  answer(stored: StoredConversation): unknown;
}

/** A guarded insert either stores, or finds the key already used: for the same request, or another. */
export type OnceOnlyInsert =
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
  insertOnce(accountId: number, conversation: NewConversation, once: OnceOnly): Promise<OnceOnlyInsert>;
}

/** An account as its own site knows it: found by the host a request came to, not by a token. */
export interface SiteAccount extends AccountAddress {
  id: number;
  name: string;
}

/** A message as a page shows it: with the time it was posted. */
export interface PageMessageRecord extends MessageRecord {
  createdAt: EpochMicros;
}

/** A conversation as its page shows it: its messages oldest first, each with its time. */
export interface ConversationPageRecord extends ConversationSettings {
  id: number;
  title: string;
  slug: string;
  createdAt: EpochMicros;
  users: UserRecord[];
  tags: TagRecord[];
  messages: PageMessageRecord[];
}

/** A conversation as a reply to it needs it: who may see it, who may post, where it lives. */
export interface ReplyTarget extends ConversationSettings {
  id: number;
  slug: string;
  memberIds: number[];
}

/** One message and what its embed needs of its conversation (who may see it, where it lives). */
export interface MessagePageRecord {
  conversation: ConversationSettings & { id: number; title: string; slug: string; memberIds: number[] };
  message: PageMessageRecord;
}

/** What the account's own site reads; every read but the first is scoped to the account. */
export interface SiteStore {
  /** The account whose host is one of `origins`, or null. */
  accountByHost(origins: readonly string[]): Promise<SiteAccount | null>;
  /** The conversation whose slug is exactly this one, ignoring case (no fallback to the latest). */
  conversationBySlug(accountId: number, slugKey: string): Promise<ConversationPageRecord | null>;
  messageById(accountId: number, messageId: number): Promise<MessagePageRecord | null>;
  /** What posting to a conversation needs of it (no messages): by exact slug, ignoring case. */
  conversationForReply(accountId: number, slugKey: string): Promise<ReplyTarget | null>;
  /** Slugs of conversations that may be indexed (public and allowing search engines), newest first. */
  indexableSlugs(accountId: number, limit: number): Promise<string[]>;
}

/** A reply that waits for its author to sign in (their e-mail is an existing user's). */
export interface PendingReply {
  conversationId: number;
  text: string;
  submitKey: string | null;
}

/** A person signed in on an account's site. */
export interface SignedIn {
  user: UserRecord;
  /** The session's expiry moved (it slides): the cookie should be sent again. */
  renewed: boolean;
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
  createSignInLink(
    accountId: number,
    userId: number,
    token: string,
    o: { ttlSeconds: number; returnPath: string; pending: PendingReply | null },
  ): Promise<void>;
  /** Spends a link: once, and only before it expires; null otherwise. */
  useSignInLink(
    accountId: number,
    token: string,
  ): Promise<{ userId: number; returnPath: string; pending: PendingReply | null } | null>;
  createSession(accountId: number, userId: number, token: string, ttlSeconds: number): Promise<void>;
  /** The session's user, sliding its expiry to ttlSeconds from now at most once a day; null when unknown or expired. */
  session(accountId: number, token: string, ttlSeconds: number): Promise<SignedIn | null>;
  endSession(accountId: number, token: string): Promise<void>;
}

/** Where replies are written. */
export interface ReplyStore {
  /**
   * Adds a text message to the conversation; with a submitKey the account already used, nothing is
   * written and that message's id comes back.
   */
  insert(
    accountId: number,
    conversationId: number,
    reply: { authorId: number | null; text: string; submitKey: string | null },
  ): Promise<{ id: number }>;
}

/** Mail is queued in the database and sent by a worker, so a request never waits for SMTP. */
export interface MailOutbox {
  enqueue(accountId: number, mail: { to: string; subject: string; text: string }): Promise<void>;
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
