import { type MediaReferences, type MediaStore, removeRecording } from '../media/media.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { UpdateConversationStore } from './ports.ts';

/** delete_conversation's answer. */
export interface DeletedConversation {
  id: number;
  deleted: true;
}

/**
 * delete_conversation: deletes one of the account's conversations for good, with its messages,
 * members, tags and read marks, and announces `conversation_deleted`; then the recordings its
 * messages held (those no other message holds) are removed from the store. A recording the store
 * cannot remove now is left to the sweep of unreferenced recordings (sweepRecordings).
 */
export async function deleteConversation(
  deps: {
    updateConversationStore: UpdateConversationStore;
    media: { store: MediaStore };
    mediaReferences: MediaReferences;
  },
  account: Pick<AccountContext, 'id'>,
  input: { conversationId: number },
): Promise<DeletedConversation> {
  const deleted = await deps.updateConversationStore.deleteConversation(account.id, input.conversationId);
  if (!deleted) throw new DomainError('conversation_not_found');
  const keys = [...new Set(deleted.mediaKeys)];
  if (keys.length > 0) {
    const wanted = await deps.mediaReferences.referenced(keys);
    for (const key of keys) {
      if (wanted.has(key)) continue;
      try {
        await removeRecording(deps.media.store, key);
      } catch {
        // Swept later: nothing refers to it any more.
      }
    }
  }
  return { id: input.conversationId, deleted: true };
}
