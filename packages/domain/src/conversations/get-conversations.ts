import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { FIRST_PAGE, MAX_PAGE, pageWindow } from '../shared/paging.ts';
import type { ConversationStore } from './ports.ts';
import { type ConversationListView, listedConversationView } from './views.ts';

/** Where a page stands among its neighbours, for transports that link pages (REST's Link header). */
export interface PagePosition {
  page: number;
  hasPrevious: boolean;
  hasNext: boolean;
}

export async function getConversations(
  deps: { conversations: ConversationStore },
  account: AccountContext,
  request: { page?: number | undefined },
): Promise<{ view: ConversationListView; position: PagePosition }> {
  // No account holds that many conversations: past the last page, without asking the database.
  if (request.page !== undefined && request.page > MAX_PAGE) {
    throw new DomainError('conversation_not_found');
  }
  let window: ReturnType<typeof pageWindow>;
  try {
    window = pageWindow(request.page);
  } catch (e) {
    throw new DomainError('invalid_input', (e as Error).message);
  }
  const { records, hasMore } = await deps.conversations.listPage(account.id, window);
  // An empty account and a page past the last one both mean: nothing here.
  if (records.length === 0) throw new DomainError('conversation_not_found');
  const page = request.page ?? FIRST_PAGE;
  return {
    view: { conversations: records.map((r) => listedConversationView(account, r)) },
    position: { page, hasPrevious: page > FIRST_PAGE, hasNext: hasMore },
  };
}
