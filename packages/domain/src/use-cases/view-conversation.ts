import type {
  ConversationPageRecord,
  ConversationSettings,
  MessagePageRecord,
  SiteAccount,
  SiteStore,
} from '../ports.ts';
import { slugKey, slugProblem } from '../slug.ts';

/**
 * Who is looking at a page. Nobody is signed in yet (sign-in arrives with replies), so today every
 * viewer is anonymous; a signed-in member will be `{ userId }`.
 */
export type Viewer = { userId: number } | null;

/**
 * The one privacy rule (`anyone_can_post`): a public conversation is visible to anyone with its
 * address; a private one only to a signed-in member. To anyone else a private conversation does not
 * exist, so the rule's callers answer it exactly as a missing one.
 */
export function maySee(c: ConversationSettings, memberIds: readonly number[], viewer: Viewer): boolean {
  return c.anyoneCanPost || (viewer !== null && memberIds.includes(viewer.userId));
}

/**
 * May search engines index it (`allow_search_engines`)? Only a public conversation can be: a private
 * one never is, whatever its flag says.
 */
export const isIndexable = (c: ConversationSettings): boolean => c.anyoneCanPost && c.allowSearchEngines;

/** The conversation at `/c/<slug>` of the account's site, or null when there is none this viewer may see. */
export async function viewConversation(
  deps: { site: SiteStore },
  account: SiteAccount,
  slug: string,
  viewer: Viewer = null,
): Promise<ConversationPageRecord | null> {
  if (slugProblem(slug)) return null;
  const record = await deps.site.conversationBySlug(account.id, slugKey(slug));
  if (!record) return null;
  return maySee(
    record,
    record.users.map((u) => u.id),
    viewer,
  )
    ? record
    : null;
}

/** Message ids are PostgreSQL serials: positive and below 2^31. */
const MAX_MESSAGE_ID = 2_147_483_647;

/** One message of the account's site, or null when there is none this viewer may see. */
export async function viewMessage(
  deps: { site: SiteStore },
  account: SiteAccount,
  messageId: number,
  viewer: Viewer = null,
): Promise<MessagePageRecord | null> {
  if (!Number.isSafeInteger(messageId) || messageId < 1 || messageId > MAX_MESSAGE_ID) return null;
  const found = await deps.site.messageById(account.id, messageId);
  if (!found) return null;
  return maySee(found.conversation, found.conversation.memberIds, viewer) ? found : null;
}

/** Search engines read about 500 KiB of robots.txt; the Allow lines stop well before that. */
export const ROBOTS_MAX_BYTES = 450 * 1024;

/**
 * The account site's robots exclusion file. Conversation pages and embeds are disallowed as a
 * whole, and each conversation that may be indexed is allowed by its own line, so the file never
 * names a slug that is private or not meant to be found (a slug is the only key to a public
 * conversation). Allow lines stop at ROBOTS_MAX_BYTES, newest conversations first.
 */
export async function robotsFile(
  deps: { site: SiteStore },
  account: SiteAccount,
  maxBytes = ROBOTS_MAX_BYTES,
): Promise<string> {
  const head = ['User-agent: *', 'Disallow: /c/', 'Disallow: /embeds/'];
  const tail = ['', `Sitemap: ${account.host}/sitemap.xml`, ''];
  let size = [...head, ...tail].join('\n').length + 1;
  const allows: string[] = [];
  // Each Allow line is at most 110 bytes (a slug is 1–100 ASCII characters).
  for (const slug of await deps.site.indexableSlugs(account.id, Math.floor(maxBytes / 12))) {
    const line = `Allow: /c/${slug}$`;
    if (size + line.length + 1 > maxBytes) break;
    size += line.length + 1;
    allows.push(line);
  }
  return [...head, ...allows, ...tail].join('\n');
}

/** Sitemaps hold at most 50,000 addresses. */
export const SITEMAP_MAX_URLS = 50_000;
