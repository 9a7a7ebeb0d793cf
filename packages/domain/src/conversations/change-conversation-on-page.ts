import type { MediaReferences, MediaStore } from '../media/media.ts';
import type { ConversationState, SiteAccount } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { changesVisibility, deletesConversation, maySee, runsConversation, type Viewer } from './access.ts';
import { deleteConversation } from './delete-conversation.ts';
import type { ConversationAccess, SiteStore, UpdateConversationStore } from './ports.ts';
import { slugKey, slugProblem } from './slug.ts';
import { updateConversation } from './update-conversation.ts';

/** Who may see and post in a conversation, as its page's settings form sends it. */
export interface VisibilitySettings {
  anyoneCanPost: boolean;
  allowAnonymousMessages: boolean;
  allowSearchEngines: boolean;
}

/** The team's triage of a conversation, as its page's forms send it (each only when given). */
export interface PageTriage {
  state?: ConversationState | undefined;
  /** A teammate's address; null: nobody. */
  assigneeEmail?: string | null | undefined;
  archived?: boolean | undefined;
  tags?: string[] | undefined;
}

export type PageChangeOutcome =
  | { kind: 'not_found' }
  | { kind: 'forbidden'; problem: string }
  | { kind: 'refused'; problem: string }
  | { kind: 'done'; slug: string };

/** The conversation at `slug` when this viewer may see it, else null (it does not exist for them). */
async function seenConversation(
  deps: { site: SiteStore },
  account: SiteAccount,
  viewer: Viewer,
  slug: string,
): Promise<ConversationAccess | null> {
  const access = slugProblem(slug) ? null : await deps.site.conversationAccess(account.id, slugKey(slug));
  return access && maySee(access, access.memberIds, viewer) ? access : null;
}

/**
 * The team renames and triages a conversation on its page, and its owners and admins change who
 * may see and post in it: update_conversation's use case, asked by the person signed in. To anyone
 * who may not see the conversation it does not exist; anyone else not allowed is refused, changing
 * nothing.
 */
export async function changeConversationOnPage(
  deps: { site: SiteStore; updateConversationStore: UpdateConversationStore },
  account: SiteAccount,
  viewer: Viewer,
  slug: string,
  change: { title?: string | undefined; visibility?: VisibilitySettings | undefined; triage?: PageTriage | undefined },
): Promise<PageChangeOutcome> {
  const access = await seenConversation(deps, account, viewer, slug);
  if (!access) return { kind: 'not_found' };
  if (!runsConversation(viewer)) {
    return { kind: 'forbidden', problem: "Only the account's team renames, tags, assigns or closes a conversation." };
  }
  if (change.visibility && !changesVisibility(viewer)) {
    return {
      kind: 'forbidden',
      problem: "Only the account's owners and admins change who may see and post in a conversation.",
    };
  }
  try {
    await updateConversation(deps, account, {
      conversationId: access.id,
      title: change.title,
      ...change.visibility,
      ...change.triage,
    });
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    if (e.code === 'conversation_not_found') return { kind: 'not_found' };
    if (e.code === 'invalid_input') return { kind: 'refused', problem: e.message };
    throw e;
  }
  return { kind: 'done', slug: access.slug };
}

/**
 * An owner or admin deletes a conversation on its page, for good: delete_conversation's use case.
 * Anyone else on the team is refused; to anyone who may not see it, it does not exist.
 */
export async function deleteConversationOnPage(
  deps: {
    site: SiteStore;
    updateConversationStore: UpdateConversationStore;
    media: { store: MediaStore };
    mediaReferences: MediaReferences;
  },
  account: SiteAccount,
  viewer: Viewer,
  slug: string,
): Promise<{ kind: 'not_found' } | { kind: 'forbidden'; problem: string } | { kind: 'done' }> {
  const access = await seenConversation(deps, account, viewer, slug);
  if (!access) return { kind: 'not_found' };
  if (!deletesConversation(viewer)) {
    return { kind: 'forbidden', problem: "Only the account's owners and admins delete a conversation." };
  }
  try {
    await deleteConversation(deps, account, { conversationId: access.id });
  } catch (e) {
    if (e instanceof DomainError && e.code === 'conversation_not_found') return { kind: 'not_found' };
    throw e;
  }
  return { kind: 'done' };
}
