import type { SiteAccount } from '../records.ts';
import { FIRST_PAGE, MAX_PAGE, PAGE_SIZE, type PageWindow } from '../shared/paging.ts';
import type { EpochMicros } from '../shared/time.ts';
import { seesEveryConversation, type Viewer } from './access.ts';
import { titleKey } from './title.ts';

/*
 * The team's inbox at `/` on the account's host: the account's conversations a team member may
 * see, latest activity first, 50 a page, each marked unread when it changed after they last
 * opened it; filtered by a tag and searched by title.
 */

export interface InboxRow {
  id: number;
  title: string;
  slug: string;
  anyoneCanPost: boolean;
  lastActivityAt: EpochMicros;
  messageCount: number;
  tags: string[];
  unread: boolean;
}

export interface InboxFilter {
  /** A tag's name, exactly (ignoring case). */
  tag?: string | undefined;
  /**
   * Words of the title (compared as titles are: case-folded), or said in one of its messages
   * (PostgreSQL's full-text search, words as written).
   */
  search?: string | undefined;
}

export interface InboxStore {
  /** One page for this reader (`seesAll`: private conversations they are not in too), and whether more follow. */
  page(
    accountId: number,
    reader: { userId: number; seesAll: boolean },
    filter: {
      tagKey: string | null;
      titlePart: string | null;
      /** The same search among what was said: a message's words (full-text, as written). */
      words: string | null;
    },
    window: PageWindow,
  ): Promise<{ rows: InboxRow[]; hasMore: boolean }>;
  /** The account's tag names, for the filter. */
  tagNames(accountId: number): Promise<string[]>;
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

export interface InboxPage {
  rows: InboxRow[];
  page: number;
  hasMore: boolean;
  tags: string[];
  filter: { tag: string; search: string };
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
  const tag = clean(filter.tag, 100);
  const search = clean(filter.search, 255);
  const [found, tags] = await Promise.all([
    deps.inbox.page(
      account.id,
      { userId: viewer.userId, seesAll: seesEveryConversation(viewer.teamRole) },
      { tagKey: tag ? tag.toLowerCase() : null, titlePart: search ? titleKey(search) : null, words: search || null },
      { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
    ),
    deps.inbox.tagNames(account.id),
  ]);
  return { rows: found.rows, page, hasMore: found.hasMore, tags, filter: { tag, search } };
}

/** A team member opened a conversation: it is no longer unread for them. Others leave no mark. */
export async function markConversationRead(
  deps: { inbox: InboxStore },
  account: SiteAccount,
  viewer: Viewer,
  conversationId: number,
): Promise<void> {
  if (viewer && viewer.teamRole !== null) await deps.inbox.markRead(account.id, viewer.userId, conversationId);
}
