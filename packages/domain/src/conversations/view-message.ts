import type { SiteAccount } from '../records.ts';
import { maySee, reachableByNumber, seesInternalNotes, type Viewer } from './access.ts';
import type { MessagePageRecord, SiteStore } from './ports.ts';
import { slugKey } from './slug.ts';

/** Message ids are PostgreSQL serials: positive and below 2^31. */
const MAX_MESSAGE_ID = 2_147_483_647;

/**
 * One message of the account's site, or null when there is none this viewer may see (`granted`:
 * the conversation an anonymous visitor's device started, as on its page). Its number can be
 * counted, so `slug` is the conversation's slug the request carried (null: none): an unlisted
 * public conversation's message is reached by number only with it (reachableByNumber). An
 * embed (`embed`) never shows an internal note.
 */
export async function viewMessage(
  deps: { site: SiteStore },
  account: SiteAccount,
  messageId: number,
  viewer: Viewer = null,
  granted: number | null = null,
  slug: string | null = null,
  embed = false,
): Promise<MessagePageRecord | null> {
  if (!Number.isSafeInteger(messageId) || messageId < 1 || messageId > MAX_MESSAGE_ID) return null;
  const found = await deps.site.messageById(account.id, messageId);
  if (!found) return null;
  const c = found.conversation;
  // An internal note is the team's, on the team's pages: anyone else, and any embed, has none.
  if (found.message.internal && (embed || !seesInternalNotes(viewer))) return null;
  return c.id === granted || reachableByNumber(c, c.memberIds, viewer, slugGiven(c, slug)) ? found : null;
}

/** Whether a request carried this conversation's slug (compared as slugs are, ignoring case). */
export const slugGiven = (c: { slug: string }, slug: string | null | undefined): boolean =>
  slug !== null && slug !== undefined && slug.length <= 100 && slugKey(slug) === slugKey(c.slug);

/**
 * Whether this viewer may see the conversation `conversationId` of the account (the team's inbox
 * asks it of each conversation its live stream hears of).
 */
export async function maySeeConversation(
  deps: { site: SiteStore },
  account: SiteAccount,
  conversationId: number,
  viewer: Viewer,
): Promise<boolean> {
  const target = await deps.site.conversationAccessById(account.id, conversationId);
  return target !== null && maySee(target, target.memberIds, viewer);
}
