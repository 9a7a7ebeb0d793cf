import type { SiteAccount } from '../records.ts';
import { seesInternalNotes, type Viewer } from './access.ts';
import type { ConversationAccess, PageMessageRecord, SiteStore } from './ports.ts';
import { visibleConversation } from './view-conversation.ts';

/** Message ids are PostgreSQL serials: positive and below 2^31. */
const MAX_MESSAGE_ID = 2_147_483_647;

/**
 * A thread of the conversation at `/c/<slug>` (its page, `/c/<slug>/m/<id>`, by any message of
 * it), for a reader who may see the conversation: its first message and its replies; internal
 * notes only for the team (an embed, for the world outside, never shows one). Null when there is
 * none this reader may see.
 */
export async function viewThread(
  deps: { site: SiteStore },
  account: SiteAccount,
  slug: string,
  messageId: number,
  viewer: Viewer,
  granted: number | null = null,
  embed = false,
): Promise<{ conversation: ConversationAccess; messages: PageMessageRecord[] } | null> {
  if (!Number.isSafeInteger(messageId) || messageId < 1 || messageId > MAX_MESSAGE_ID) return null;
  const conversation = await visibleConversation(deps, account, slug, viewer, granted);
  if (!conversation) return null;
  const messages = await deps.site.thread(account.id, conversation.id, messageId, !embed && seesInternalNotes(viewer));
  return messages ? { conversation, messages } : null;
}
