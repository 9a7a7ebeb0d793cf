import type { MessageAuthorRecord } from '../records.ts';
import type { PageWindow } from '../shared/paging.ts';
import type { AccountAddress } from '../shared/urls.ts';
import type { WireJson } from '../shared/wire-json.ts';
import type { PlaySummary } from './plays.ts';
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
  conversationId: number;
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
   * Keeps a play, once per message and session (with its live event, and its `message_played`
   * webhook event when the account subscribed); false when the session had played it already.
   */
  record(play: NewPlay): Promise<boolean>;
  /** Who played each of `messageIds` (messages of the account); a message nobody played is absent. */
  summaries(accountId: number, messageIds: readonly number[]): Promise<Map<number, PlaySummary>>;
  /** A message's plays, oldest first; null when the account has no such message (or it is hidden). */
  log(accountId: number, messageId: number): Promise<PlayRecord[] | null>;
}
