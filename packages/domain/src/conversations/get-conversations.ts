import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { FIRST_PAGE, MAX_PAGE, pageWindow } from '../shared/paging.ts';
import type { WireJson } from '../shared/wire-json.ts';
import type { ConversationStore } from './ports.ts';
import type { ConversationListView } from './views.ts';

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
): Promise<{ page: WireJson<ConversationListView>; position: PagePosition }> {
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
  const { page, count, hasMore } = await deps.conversations.listPage(account, window);
  // An empty account and a page past the last one both mean: nothing here.
  if (count === 0) throw new DomainError('conversation_not_found');
  const number = request.page ?? FIRST_PAGE;
  return { page, position: { page: number, hasPrevious: number > FIRST_PAGE, hasNext: hasMore } };
}
