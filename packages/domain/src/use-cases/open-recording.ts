import { maySee, type Viewer } from '../access.ts';
import type { Authenticated, MessageMedia, SiteAccount, SiteStore } from '../ports.ts';
import { tokenFromAuthorization } from '../tokens.ts';

/**
 * A message's recording, for whoever may see the message: anyone for a public conversation's; a
 * private one's for those the page's rule lets in (access.ts), the device that started it (its
 * pass), or a client with the account's own API token. Anyone else, like a message that is missing, hidden or has no recording, gets null.
 */
export async function openRecording(
  deps: { site: SiteStore; authenticate(token: string): Promise<Authenticated | null> },
  account: SiteAccount,
  messageId: number,
  reader: {
    viewer: Viewer;
    authorization: string | null | undefined;
    /** What this device's pass holds of a conversation (the start it made), if it has one. */
    pass?: ((conversationId: number) => Promise<{ userId: number | null } | null>) | undefined;
  },
): Promise<MessageMedia | null> {
  const found = await deps.site.mediaOf(account.id, messageId);
  if (!found) return null;
  const c = found.conversation;
  if (maySee(c, c.memberIds, reader.viewer)) return found;
  // A visitor's device that started it: an anonymous start's, or its person's while a member.
  const held = reader.viewer === null && reader.pass ? await reader.pass(c.id) : null;
  if (held && (held.userId === null || c.memberIds.includes(held.userId))) return found;
  const token = tokenFromAuthorization(reader.authorization);
  const client = token ? await deps.authenticate(token) : null;
  return client?.account.id === account.id ? found : null;
}
