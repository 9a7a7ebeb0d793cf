import { maySee, type Viewer } from '../access.ts';
import type { MessagePageRecord, SiteAccount, SiteStore } from '../ports.ts';

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
