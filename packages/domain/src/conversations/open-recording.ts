import type { Authenticated, SiteAccount } from '../records.ts';
import { tokenFromAuthorization } from '../shared/tokens.ts';
import { maySee, reachableByNumber, seesInternalNotes, type Viewer } from './access.ts';
import type { ConversationAccess, MessageMedia, SiteStore } from './ports.ts';
import { slugGiven } from './view-message.ts';

/** Who asks for a message's recording, as the site's routes know them. */
export interface RecordingReader {
  viewer: Viewer;
  authorization: string | null | undefined;
  /** The conversation's slug the request carried (`?c=`), if any: the key to an unlisted one. */
  slug?: string | null | undefined;
  /**
   * What this device's pass opens of a conversation (the start it made, while it still may):
   * the person it reads as, or `granted` for an anonymous start; null: nothing.
   */
  pass?: ((c: ConversationAccess) => { viewer: Viewer; granted: number | null } | null) | undefined;
}

/**
 * A message's recording, for whoever may see the message: anyone for a public conversation's; a
 * private one's for those the page's rule lets in (access.ts), the device that started it (its
 * pass), or a client with the account's own API token; an internal note's only for the team and
 * the token. Anyone else, like a message that is missing, hidden or has no recording, gets null.
 */
export async function openRecording(
  deps: { site: SiteStore; authenticate(token: string): Promise<Authenticated | null> },
  account: SiteAccount,
  messageId: number,
  reader: RecordingReader,
): Promise<MessageMedia | null> {
  const found = await deps.site.mediaOf(account.id, messageId);
  if (!found) return null;
  return (await recordingReader(deps, account, found, reader)) === undefined ? null : found;
}

/**
 * Who plays `found` as the rule above lets them: the viewer (the signed-in person, the person a
 * start's pass reads as, or null for nobody known, the account's token included), or undefined
 * when they may not.
 */
export async function recordingReader(
  deps: { authenticate(token: string): Promise<Authenticated | null> },
  account: SiteAccount,
  found: MessageMedia,
  reader: RecordingReader,
): Promise<Viewer | undefined> {
  const c = found.conversation;
  // An internal note's: the team that may see the conversation, or the account's own token.
  const notes = !found.internal || seesInternalNotes(reader.viewer);
  if (notes && reachableByNumber(c, c.memberIds, reader.viewer, slugGiven(c, reader.slug))) return reader.viewer;
  // A visitor's device that started it: an anonymous start's, or its person's while a member.
  const held = reader.viewer === null && reader.pass && !found.internal ? reader.pass(c) : null;
  if (held && (held.granted === c.id || maySee(c, c.memberIds, held.viewer))) return held.viewer;
  const token = tokenFromAuthorization(reader.authorization);
  const client = token ? await deps.authenticate(token) : null;
  return client?.account.id === account.id ? null : undefined;
}
