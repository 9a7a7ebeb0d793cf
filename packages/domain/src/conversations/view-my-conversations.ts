import type { SiteAccount } from '../records.ts';
import type { Viewer } from './access.ts';
import type { InboxRow, InboxStore } from './view-inbox.ts';

/** How many of their conversations a participant's home lists. */
export const MY_CONVERSATIONS_MAX = 50;

export type MyConversation = Pick<InboxRow, 'id' | 'title' | 'slug' | 'anyoneCanPost' | 'lastActivityAt'>;

/**
 * `/` for someone who takes part but is not on the team: the conversations they are a member of
 * (signed in) and those this device's pass opens (`opened`: ids the site checked against the
 * pass), latest activity first. The team has its inbox instead: none for them here.
 */
export async function viewMyConversations(
  deps: { inbox: InboxStore },
  account: SiteAccount,
  viewer: Viewer,
  opened: readonly number[],
): Promise<MyConversation[]> {
  if (viewer?.teamRole) return [];
  if (!viewer && opened.length === 0) return [];
  return deps.inbox.mine(account.id, viewer?.userId ?? null, opened, MY_CONVERSATIONS_MAX);
}
