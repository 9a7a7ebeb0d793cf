import type { MessageAuthorRecord, UserRecord } from '../records.ts';
import type { PageWindow } from '../shared/paging.ts';
import type { AccountAddress } from '../shared/urls.ts';
import type { WireJson } from '../shared/wire-json.ts';
import type { PlaySummary } from './plays.ts';
import type { ReactionName } from './reactions.ts';
import type { GetMessagesAnswer, MessageDetailView } from './views.ts';

/** Which of the account's messages get_messages reads: of one conversation or all, within times. */
export interface MessageQuery {
  /** The conversation, by its slug as slugKey compares it; null: every conversation of the account. */
  conversationSlugKey: string | null;
  /** Posted at or after, and before, these instants (ISO 8601 text PostgreSQL reads), when given. */
  createdAfter: string | null;
  createdBefore: string | null;
}

/** The account's messages as the messages resource answers them, built where they are stored. */
export interface MessageStore {
  /**
   * A page, newest first; `conversationFound` false when a slug was asked and names no
   * conversation of the account.
   */
  page(
    account: AccountAddress & { id: number },
    query: MessageQuery,
    window: PageWindow,
  ): Promise<{ page: WireJson<GetMessagesAnswer>; count: number; hasMore: boolean; conversationFound: boolean }>;
  /** One message of the account (not hidden), as create_message answers it; null when there is none. */
  one(account: AccountAddress & { id: number }, messageId: number): Promise<WireJson<MessageDetailView> | null>;
  /** What a message was posted as: for telling an Idempotency-Key's retry from another request. */
  posted(
    accountId: number,
    messageId: number,
  ): Promise<{ conversationId: number; authorId: number | null; text: string } | null>;
}

/** A play the site counted: of a message, by a viewer (null: a visitor) in one viewing session. */
export interface NewPlay {
  accountId: number;
  messageId: number;
  viewerId: number | null;
  /** The session's key (a hash of its cookie): a message is played once per session. */
  sessionKey: string;
}

/** One play as the log keeps it. */
export interface PlayRecord {
  viewer: MessageAuthorRecord;
  playedAt: Date;
}

/** The played receipts: written by the site's beacon, read by the pages and the API. */
export interface PlayStore {
  /**
   * Keeps plays in one statement, each once per message and session (with its live event, and its
   * `message_played` webhook event when the account subscribed), of recordings the account still
   * keeps and shows; how many were new.
   */
  record(plays: readonly NewPlay[]): Promise<number>;
  /** Who played each of `messageIds` (messages of the account); a message nobody played is absent. */
  summaries(accountId: number, messageIds: readonly number[]): Promise<Map<number, PlaySummary>>;
  /** A message's plays, oldest first; null when the account has no such message (or it is hidden). */
  log(accountId: number, messageId: number): Promise<PlayRecord[] | null>;
}

/** A reaction to keep: of a message of the account, by a person or an anonymous session. */
export interface NewReaction {
  accountId: number;
  messageId: number;
  reaction: ReactionName;
  /** The signed-in person who reacts; null: a visitor nobody knows. */
  userId: number | null;
  /** reactorKey's: a reaction is kept once per message, kind and key. */
  reactorKey: string;
}

/** One kind of reaction on a message as kept: its count, whether `reactorKey` is among it, the people in it. */
export interface KeptReaction {
  reaction: ReactionName;
  count: number;
  mine: boolean;
  users: UserRecord[];
}

/** Reactions: written by the pages and the API, read by both. */
export interface ReactionStore {
  /**
   * Keeps a reaction once (with its live event, its `reaction_added` webhook event when the account
   * subscribed, and the author's notice); `missing` when the account has no such message shown.
   */
  add(reaction: NewReaction): Promise<'added' | 'kept' | 'missing'>;
  /** Takes one back; `missing` when the account has no such message shown. */
  remove(reaction: Omit<NewReaction, 'userId'>): Promise<'removed' | 'none' | 'missing'>;
  /** The reactions on each of `messageIds` (the account's), in the set's order; a message without any is absent. */
  summaries(accountId: number, messageIds: readonly number[], reactorKey: string): Promise<Map<number, KeptReaction[]>>;
}
