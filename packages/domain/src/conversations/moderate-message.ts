import { type MediaDeps, removeRecording } from '../media/media.ts';
import type { SiteAccount } from '../records.ts';
import { managesMembers, maySee, type Viewer } from './access.ts';
import type { SiteStore } from './ports.ts';
import { slugKey, slugProblem } from './slug.ts';

/*
 * Moderation on a conversation's page: someone on the account's team hides a message (it leaves
 * the page, the embeds, the API's answers and the mail; the account's webhooks hear
 * message_hidden) or shows it again; an author deletes their own message within
 * AUTHOR_DELETE_MINUTES of posting it. Each change moves the account's change mark.
 */

export const AUTHOR_DELETE_MINUTES = 15;

export interface HiddenMessage {
  id: number;
  authorName: string | null;
  text: string;
}

export interface ModerationStore {
  /** True when the message was shown and is now hidden. */
  hide(accountId: number, conversationId: number, messageId: number, by: number): Promise<boolean>;
  show(accountId: number, conversationId: number, messageId: number): Promise<boolean>;
  /**
   * The author's own message, younger than the window, deleted: what it was (its recording's key,
   * if it had one); null when there was no such message.
   */
  deleteOwn(
    accountId: number,
    conversationId: number,
    messageId: number,
    authorId: number,
    windowSeconds: number,
  ): Promise<{ mediaKey: string | null } | null>;
  /** The conversation's hidden messages (for the team, to show them again). */
  hidden(accountId: number, conversationId: number): Promise<HiddenMessage[]>;
}

export type ModerationAction = 'hide' | 'show' | 'delete';
export const MODERATION_ACTIONS: readonly ModerationAction[] = ['hide', 'show', 'delete'];

export type ModerationOutcome =
  | { kind: 'not_found' }
  | { kind: 'forbidden'; problem: string }
  | { kind: 'done'; slug: string };

export async function moderateMessage(
  deps: { site: SiteStore; moderation: ModerationStore; media: Pick<MediaDeps, 'store'> },
  account: SiteAccount,
  viewer: Viewer,
  slug: string,
  messageId: number,
  action: ModerationAction,
): Promise<ModerationOutcome> {
  const access = slugProblem(slug) ? null : await deps.site.conversationAccess(account.id, slugKey(slug));
  if (!viewer || !access || !maySee(access, access.memberIds, viewer)) return { kind: 'not_found' };
  if (action === 'delete') {
    const deleted = await deps.moderation.deleteOwn(
      account.id,
      access.id,
      messageId,
      viewer.userId,
      AUTHOR_DELETE_MINUTES * 60,
    );
    if (!deleted) {
      return {
        kind: 'forbidden',
        problem: `You can delete only your own message, within ${AUTHOR_DELETE_MINUTES} minutes of posting it.`,
      };
    }
    // A deleted message's recording goes with it (once the row is gone, nothing serves it).
    if (deleted.mediaKey) await removeRecording(deps.media.store, deleted.mediaKey);
    return { kind: 'done', slug: access.slug };
  }
  if (!managesMembers(viewer)) {
    return { kind: 'forbidden', problem: "Only the account's team hides messages or shows them again." };
  }
  const changed =
    action === 'hide'
      ? await deps.moderation.hide(account.id, access.id, messageId, viewer.userId)
      : await deps.moderation.show(account.id, access.id, messageId);
  return changed ? { kind: 'done', slug: access.slug } : { kind: 'not_found' };
}
