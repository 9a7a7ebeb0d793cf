import type { SiteAccount } from '../records.ts';
import { maySee, seesInternalNotes, type Viewer } from './access.ts';
import type { ConversationAccess, ConversationPageRecord, SiteStore } from './ports.ts';
import { slugKey, slugProblem } from './slug.ts';

/** Messages a conversation's page shows at once: the latest, or one numbered page of them. */
export const PAGE_MESSAGES = 100;

/** The latest replies of a thread its first message shows on the conversation's page. */
export const THREAD_PREVIEW_REPLIES = 2;

/**
 * Anchors the latest page keeps for the messages before it (their `message_url`s land there and
 * point on to the page that shows them); older messages are reached through the earlier pages.
 */
export const EARLIER_ANCHORS_MAX = 2_000;

/** The number of pages a conversation of `count` messages has (1 for none). */
export const messagePages = (count: number): number => Math.max(1, Math.ceil(count / PAGE_MESSAGES));

/** The page (1-based, oldest first) that holds the message at `position`. */
export const pageOf = (position: number): number => Math.floor(position / PAGE_MESSAGES) + 1;

/**
 * The conversation at `/c/<slug>` of the account's site, or null when there is none this viewer
 * may see. Who may see it is decided on the conversation alone, before a message is read, so a
 * private conversation costs what a missing one does. `page` (1-based, oldest first) picks a
 * numbered page of messages; without it the latest ones are shown. A page past the last is null.
 * `granted` is the conversation an anonymous visitor's device started (its pass opens it). The
 * team's page holds its internal notes; an embed (`embed`), for the world outside, never does.
 */
export async function viewConversation(
  deps: { site: SiteStore },
  account: SiteAccount,
  slug: string,
  viewer: Viewer = null,
  page: number | null = null,
  granted: number | null = null,
  embed = false,
): Promise<ConversationPageRecord | null> {
  const target = await visibleConversation(deps, account, slug, viewer, granted);
  if (!target) return null;
  if (page !== null && (!Number.isSafeInteger(page) || page < 1)) return null;
  return deps.site.conversationPage(
    account.id,
    target.id,
    {
      start: page === null ? null : (page - 1) * PAGE_MESSAGES,
      size: PAGE_MESSAGES,
      earlierIds: page === null ? EARLIER_ANCHORS_MAX : 0,
      threadPreview: THREAD_PREVIEW_REPLIES,
    },
    !embed && seesInternalNotes(viewer),
  );
}

/**
 * The conversation at `/c/<slug>` when this viewer may see it (the one rule every door of a
 * conversation asks: its page, its embed, their live streams and fragments); else null.
 */
export async function visibleConversation(
  deps: { site: SiteStore },
  account: SiteAccount,
  slug: string,
  viewer: Viewer,
  granted: number | null,
): Promise<ConversationAccess | null> {
  if (slugProblem(slug)) return null;
  const target = await deps.site.conversationAccess(account.id, slugKey(slug));
  return target && (maySee(target, target.memberIds, viewer) || target.id === granted) ? target : null;
}
