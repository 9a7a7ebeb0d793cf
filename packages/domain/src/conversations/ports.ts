import type {
  AccountContext,
  ConversationRecord,
  ConversationSettings,
  ConversationSource,
  ConversationState,
  IntakePageRecord,
  MessageRecord,
  SiteAccount,
  TeamRole,
} from '../records.ts';

/* The ports the conversations area reads and writes through: conversations, members, the site's reads. */

import type { PageWindow } from '../shared/paging.ts';
import type { EpochMicros } from '../shared/time.ts';
import type { WireJson } from '../shared/wire-json.ts';

import type { WorkflowCopy } from '../shared/workflow-steps.ts';

import type { LookupCriteria } from './lookup.ts';
import type { ConversationTriage } from './triage.ts';

import type { ConversationListView, ConversationView, UpdatedConversationView } from './views.ts';

/** A conversation about to be stored: everything but what the database assigns. */
export interface NewConversation extends ConversationSettings {
  /** When it is created: the clock the default title was rendered from. */
  createdAt: EpochMicros;
  title: string;
  slug: string;
  viaPrimaryIntakePage: boolean;
  intakePageId: number | null;
  /** How it began: the API, a visitor on an intake page, the team. */
  source: ConversationSource;
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
  /**
   * The same conversation as get_conversation answers it (its JSON built where the rows are), with
   * the title and slug the lookup is judged by.
   */
  findOneView(
    account: Pick<AccountContext, 'id' | 'host' | 'key'>,
    criteria: LookupCriteria,
  ): Promise<{ view: WireJson<ConversationView>; title: string; slug: string } | null>;
  /**
   * One page, newest first, as get_conversations answers it (built where the rows are, not parsed
   * and serialized again): its JSON, how many conversations it holds, and whether any lies beyond.
   */
  listPage(
    account: Pick<AccountContext, 'id' | 'host' | 'key'>,
    window: PageWindow,
  ): Promise<{ page: WireJson<ConversationListView>; count: number; hasMore: boolean }>;
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
  addConversationMember(
    accountId: number,
    slugKey: string,
    person: { email: string; name: string | null },
  ): Promise<MemberChange | null>;
  /** Takes the address's user out of the conversation's members. Null: no such conversation. */
  removeConversationMember(accountId: number, slugKey: string, email: string): Promise<MemberChange | null>;
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

/** A message as a page shows it: with the time it was posted and whether its author is on the team. */
export interface PageMessageRecord extends MessageRecord {
  createdAt: EpochMicros;
  /** The author's place on the account's team; null for a participant or an anonymous message. */
  authorTeamRole: TeamRole | null;
  /** An unconfirmed start's name (the message is anonymous until its address is confirmed); else null. */
  claimedName: string | null;
  /** Its recording has a poster (served beside it at `…/poster`). */
  poster: boolean;
  /** An internal note: only the account's team sees it. */
  internal: boolean;
  /** The message whose thread it replies in; null for a message of the conversation itself. */
  parentId: number | null;
  /** A thread reply's moment of its thread's recording (whole seconds); null for none. */
  atSeconds: number | null;
  /** Someone reacted on it (its reactions are read only then). */
  reacted: boolean;
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
  /** The page's messages of the conversation itself (thread replies are under their first message). */
  messages: PageMessageRecord[];
  /** The threads of the page's messages that have replies, by their first message's id. */
  threads: ReadonlyMap<number, ThreadPreview>;
  /**
   * Ids of thread replies the page does not show (latest first), so their `message_url`s land here
   * too and lead on to their thread's page.
   */
  replyIds: number[];
  /** How many messages of the conversation itself (not thread replies) it has in all. */
  messageCount: number;
  /** The position (0-based, oldest first) of the page's first message. */
  start: number;
  /** The first message's text (link previews describe the conversation by it), or null. */
  firstText: string | null;
  /** Ids of the messages just before the page, oldest first, so their anchors land here too. */
  earlierIds: number[];
  triage: ConversationTriage;
}

/** What a conversation's page shows of a thread under its first message. */
export interface ThreadPreview {
  /** How many replies it has (that the reader may see). */
  count: number;
  /** Its latest replies, oldest first. */
  latest: PageMessageRecord[];
}

/** Which messages of a conversation a page holds. */
export interface MessageWindow {
  /** Position of the first (0-based, oldest first); null: the last `size` messages. */
  start: number | null;
  size: number;
  /** How many ids of the messages before the window to return (earlierIds), and of replies (replyIds). */
  earlierIds: number;
  /** How many of each thread's latest replies to return with its first message. */
  threadPreview: number;
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
  /** The recording of an internal note: for the team (and the account's token) alone. */
  internal: boolean;
  /** Its message's author (null: anonymous), and whether they are on the account's team now. */
  authorId: number | null;
  authorOnTeam: boolean;
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
  /** The same for several at once (those of the account among `conversationIds`), in one read. */
  conversationAccessByIds(accountId: number, conversationIds: readonly number[]): Promise<ConversationAccess[]>;
  /** The recording this server keeps for a message not hidden, or null. */
  mediaOf(accountId: number, messageId: number): Promise<MessageMedia | null>;
  /**
   * A conversation with one window of its messages (found by id, after its access was checked);
   * its internal notes among them only for the team (`team`).
   */
  conversationPage(
    accountId: number,
    conversationId: number,
    window: MessageWindow,
    team: boolean,
  ): Promise<ConversationPageRecord | null>;
  messageById(accountId: number, messageId: number): Promise<MessagePageRecord | null>;
  /**
   * The thread of a conversation that `messageId` is in: its first message, then its replies in
   * order; internal notes only for the team (`team`). Null when there is none to show.
   */
  thread(
    accountId: number,
    conversationId: number,
    messageId: number,
    team: boolean,
  ): Promise<PageMessageRecord[] | null>;
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

/** Raised by a ConversationStore when the slug's uniqueness constraint refuses an insert. */
export class SlugTakenError extends Error {
  constructor() {
    super('slug already used in this account');
    this.name = 'SlugTakenError';
  }
}

export interface IntakePageStore {
  findById(accountId: number, id: number): Promise<IntakePageRecord | null>;
  findPrimary(accountId: number): Promise<IntakePageRecord | null>;
}

/** What update_conversation changes: the settings a conversation is made with and its triage, each only when given. */
export interface ConversationChanges {
  title?: { title: string; key: string } | undefined;
  anyoneCanPost?: boolean | undefined;
  allowAnonymousMessages?: boolean | undefined;
  allowSearchEngines?: boolean | undefined;
  state?: ConversationState | undefined;
  /** A teammate's id (checked to be on the team); null: nobody. */
  assigneeId?: number | null | undefined;
  archived?: boolean | undefined;
  /** Every tag it has after (normalTags): the others are taken off. */
  tags?: string[] | undefined;
}

/** A conversation's settings, triage and end, by the team or the API. */
export interface UpdateConversationStore {
  /**
   * Changes the account's conversation `id` (raising the account's change mark and announcing
   * `conversation_updated`, in the same transaction) and answers it as update_conversation does;
   * null when the account has no such conversation.
   */
  updateConversation(
    account: Pick<AccountContext, 'id' | 'host' | 'key'>,
    id: number,
    changes: ConversationChanges,
  ): Promise<WireJson<UpdatedConversationView> | null>;
  /** The id of the account's team member with this address (ignoring case), or null. */
  teamMemberId(accountId: number, email: string): Promise<number | null>;
  /**
   * Deletes the account's conversation `id` with its messages, members, tags and marks (raising
   * the change mark and announcing `conversation_deleted`, in the same statement); answers the
   * keys of the recordings its messages held, or null when the account has no such conversation.
   */
  deleteConversation(accountId: number, id: number): Promise<{ mediaKeys: string[] } | null>;
}
