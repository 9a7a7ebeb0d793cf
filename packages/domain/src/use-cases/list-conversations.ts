import { DomainError } from '../errors.ts';
import { pageWindow } from '../paging.ts';
import type { AccountContext, ConversationStore } from '../ports.ts';
import { type ConversationListView, listedConversationView } from '../views.ts';
import { NO_CONVERSATIONS } from './get-conversation.ts';

export async function listConversations(
  deps: { conversations: ConversationStore },
  account: AccountContext,
  request: { page?: number | undefined },
): Promise<ConversationListView> {
  let window: ReturnType<typeof pageWindow>;
  try {
    window = pageWindow(request.page);
  } catch (e) {
    throw new DomainError('invalid_input', (e as Error).message);
  }
  const records = await deps.conversations.listPage(account.id, window);
  // An empty account and a page past the last one both mean: nothing here.
  if (records.length === 0) throw new DomainError('conversation_not_found', NO_CONVERSATIONS);
  return { conversations: records.map((r) => listedConversationView(account, r)) };
}
