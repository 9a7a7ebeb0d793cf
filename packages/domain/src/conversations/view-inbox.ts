import {
  type ConversationSource,
  type ConversationState,
  isConversationSource,
  isConversationState,
  type MessageType,
  type SiteAccount,
  type TeamRole,
} from '../records.ts';
import { FIRST_PAGE, MAX_PAGE, PAGE_SIZE, type PageWindow } from '../shared/paging.ts';
import { clockTime, type EpochMicros } from '../shared/time.ts';
import { seesEveryConversation, type Viewer } from './access.ts';
import { cutAtWord, recordingName } from './title.ts';

/*
 * The team's inbox at `/` on the account's host: the account's conversations a team member may
 * see, latest activity first, 50 a page, each marked unread when it changed after they last
 * opened it; filtered by a tag and searched by title.
 */

/**
 * Who a conversation is with: the first person outside the team who wrote in it; where nobody
 * outside the team wrote yet, its first member outside the team (one the team sent it to).
 */
export interface InboxPerson {
  /** Null: an anonymous writer who gave no name. */
  name: string | null;
  /** False for a name an anonymous writer gave (shown "(not verified)"). */
  verified: boolean;
  /** A member who has not written yet. */
  waiting?: boolean | undefined;
}

/** The latest message a row shows a snippet of. */
export interface InboxLastMessage {
  kind: MessageType;
  /** Its text's start (the store reads at most SNIPPET_READ characters). */
  text: string;
  seconds: number;
  /** Its author's name (an anonymous one's given name), or null. */
  author: string | null;
}

export interface InboxRow {
  id: number;
  title: string;
  slug: string;
  anyoneCanPost: boolean;
  lastActivityAt: EpochMicros;
  messageCount: number;
  tags: string[];
  unread: boolean;
  /** The team's latest recording kept here has not been played by anyone yet (its receipts: messages/plays.ts). */
  unplayed: boolean;
  person: InboxPerson | null;
  last: InboxLastMessage | null;
  source: ConversationSource;
  /** The intake page it began on, by name (null: none, or one deleted since). */
  intakePage: string | null;
  state: ConversationState;
  /** The teammate it is assigned to, by name. */
  assignee: string | null;
  archived: boolean;
}

/** How much of the latest message's text a store reads for its snippet. */
export const SNIPPET_READ = 300;

/** Whose conversations the inbox lists: the reader's, nobody's, or anyone's. */
export const ASSIGNEE_FILTERS = ['me', 'nobody'] as const;
export type AssigneeFilter = (typeof ASSIGNEE_FILTERS)[number];

export interface InboxFilter {
  /** A tag's name, exactly (ignoring case). */
  tag?: string | undefined;
  /**
   * Words of the title or said in one of its messages, each as the start of a word (PostgreSQL's
   * full-text search, words as written: searchTerms).
   */
  search?: string | undefined;
  /** One state (anything else: every state). */
  state?: string | undefined;
  /** `me`, `nobody` (anything else: anyone's). */
  assignee?: string | undefined;
  /** One way of beginning (anything else: every way). */
  source?: string | undefined;
  /** The archive instead of the inbox. */
  archived?: boolean | undefined;
}

/** What the store filters by, each checked and normalised (null: no filter). */
export interface InboxQuery {
  tagKey: string | null;
  /** The search as a tsquery of the 'simple' configuration (searchTerms), or null for none. */
  terms: string | null;
  state: ConversationState | null;
  assignee: AssigneeFilter | null;
  source: ConversationSource | null;
  archived: boolean;
}

/** A member of the account's team, as the inbox and a conversation's triage name them. */
export interface TeamMember {
  id: number;
  name: string;
  email: string;
  role: TeamRole;
}

export interface InboxStore {
  /** One page for this reader (`seesAll`: private conversations they are not in too), and whether more follow. */
  page(
    accountId: number,
    reader: { userId: number; seesAll: boolean },
    filter: InboxQuery,
    window: PageWindow,
  ): Promise<{ rows: InboxRow[]; hasMore: boolean }>;
  /** The account's tag names, for the filter. */
  tagNames(accountId: number): Promise<string[]>;
  /** The account's team, by name. */
  team(accountId: number): Promise<TeamMember[]>;
  /** The reader opened the conversation now. */
  markRead(accountId: number, userId: number, conversationId: number): Promise<void>;
  /**
   * The conversations `userId` is a member of (none for null) and those with the ids `ids`,
   * latest activity first, at most `limit`.
   */
  mine(
    accountId: number,
    userId: number | null,
    ids: readonly number[],
    limit: number,
  ): Promise<Pick<InboxRow, 'id' | 'title' | 'slug' | 'anyoneCanPost' | 'lastActivityAt'>[]>;
}

/** The filter as the page shows it again: each as given when it was understood, else empty. */
export interface ShownInboxFilter {
  tag: string;
  search: string;
  state: ConversationState | '';
  assignee: AssigneeFilter | '';
  source: ConversationSource | '';
  archived: boolean;
}

export interface InboxPage {
  rows: InboxRow[];
  page: number;
  hasMore: boolean;
  tags: string[];
  filter: ShownInboxFilter;
}

const clean = (value: string | undefined, max: number): string => (value ?? '').trim().slice(0, max);

/** The inbox page `page` for a team member; null for anyone else (they get the landing page) or a page out of range. */
export async function viewInbox(
  deps: { inbox: InboxStore },
  account: SiteAccount,
  viewer: Viewer,
  page: number,
  filter: InboxFilter,
): Promise<InboxPage | null> {
  if (!viewer || viewer.teamRole === null) return null;
  if (!Number.isInteger(page) || page < FIRST_PAGE || page > MAX_PAGE) return null;
  const shown: ShownInboxFilter = {
    tag: clean(filter.tag, 100),
    search: clean(filter.search, 255),
    state: isConversationState(filter.state) ? filter.state : '',
    assignee: ASSIGNEE_FILTERS.find((a) => a === filter.assignee) ?? '',
    source: isConversationSource(filter.source) ? filter.source : '',
    archived: filter.archived === true,
  };
  const { tag, search } = shown;
  const [found, tags] = await Promise.all([
    deps.inbox.page(
      account.id,
      { userId: viewer.userId, seesAll: seesEveryConversation(viewer.teamRole) },
      {
        tagKey: tag ? tag.toLowerCase() : null,
        terms: searchTerms(search),
        state: shown.state || null,
        assignee: shown.assignee || null,
        source: shown.source || null,
        archived: shown.archived,
      },
      { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
    ),
    deps.inbox.tagNames(account.id),
  ]);
  return { rows: found.rows, page, hasMore: found.hasMore, tags, filter: shown };
}

/** At most this many words of a search count. */
export const SEARCH_WORDS = 8;

/**
 * A search as PostgreSQL's full-text query (the 'simple' configuration: words lower-cased, no
 * language's stemming): every word must be said in the conversation (its title or a visible
 * message), whole, except the last, which may be the start of a word, as it is while it is typed
 * ("invoice inv" finds "invoice invoices"). Only letters and digits make words, so nothing typed is
 * query syntax; null when nothing is left to search for. (Every word a start was slow: the index
 * reads every word a start matches before it can intersect them, all of a common word's list.)
 */
export function searchTerms(search: string): string | null {
  const words =
    search
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const kept = [...new Set(words)].slice(0, SEARCH_WORDS).map((w) => w.slice(0, 100));
  return kept.length > 0 ? `${kept.join(' & ')}:*` : null;
}

/** What a row says of its latest message: its words' start on one line, or "Video message, 0:42". */
export function snippet(last: InboxLastMessage): string {
  const words = last.text.replace(/\s+/gu, ' ').trim();
  if (words) return words.length > SNIPPET_LENGTH ? `${cutAtWord(words, SNIPPET_LENGTH)}…` : words;
  return last.kind === 'text' ? '' : `${recordingName(last.kind)}, ${clockTime(last.seconds)}`;
}

/** How much of the latest message a row shows. */
export const SNIPPET_LENGTH = 140;

/** A team member opened a conversation: it is no longer unread for them. Others leave no mark. */
export async function markConversationRead(
  deps: { inbox: InboxStore },
  account: SiteAccount,
  viewer: Viewer,
  conversationId: number,
): Promise<void> {
  if (viewer && viewer.teamRole !== null) await deps.inbox.markRead(account.id, viewer.userId, conversationId);
}
