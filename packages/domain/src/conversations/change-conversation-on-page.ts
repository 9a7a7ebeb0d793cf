import type { SiteAccount } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { changesVisibility, maySee, renamesConversation, type Viewer } from './access.ts';
import type { SiteStore, UpdateConversationStore } from './ports.ts';
import { slugKey, slugProblem } from './slug.ts';
import { updateConversation } from './update-conversation.ts';

/** Who may see and post in a conversation, as its page's settings form sends it. */
export interface VisibilitySettings {
  anyoneCanPost: boolean;
  allowAnonymousMessages: boolean;
  allowSearchEngines: boolean;
}

export type PageChangeOutcome =
  | { kind: 'not_found' }
  | { kind: 'forbidden'; problem: string }
  | { kind: 'refused'; problem: string }
  | { kind: 'done'; slug: string };

/**
 * The team renames a conversation on its page, and its owners and admins change who may see and
 * post in it: update_conversation's use case, asked by the person signed in. To anyone who may not
 * see the conversation it does not exist; anyone else not allowed is refused, changing nothing.
 */
export async function changeConversationOnPage(
  deps: { site: SiteStore; updateConversationStore: UpdateConversationStore },
  account: SiteAccount,
  viewer: Viewer,
  slug: string,
  change: { title: string; visibility?: VisibilitySettings | undefined },
): Promise<PageChangeOutcome> {
  const access = slugProblem(slug) ? null : await deps.site.conversationAccess(account.id, slugKey(slug));
  if (!access || !maySee(access, access.memberIds, viewer)) return { kind: 'not_found' };
  if (!renamesConversation(viewer)) {
    return { kind: 'forbidden', problem: "Only the account's team renames a conversation." };
  }
  if (change.visibility && !changesVisibility(viewer)) {
    return {
      kind: 'forbidden',
      problem: "Only the account's owners and admins change who may see and post in a conversation.",
    };
  }
  try {
    await updateConversation(deps, account, { conversationId: access.id, title: change.title, ...change.visibility });
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    if (e.code === 'conversation_not_found') return { kind: 'not_found' };
    if (e.code === 'invalid_input') return { kind: 'refused', problem: e.message };
    throw e;
  }
  return { kind: 'done', slug: access.slug };
}
