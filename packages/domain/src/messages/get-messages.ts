import type { PagePosition } from '../conversations/get-conversations.ts';
import { slugKey } from '../conversations/slug.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { FIRST_PAGE, MAX_PAGE, pageWindow } from '../shared/paging.ts';
import type { WireJson } from '../shared/wire-json.ts';
import type { MessageStore } from './ports.ts';
import type { GetMessagesAnswer } from './views.ts';

/** What get_messages is asked. */
export interface GetMessagesInput {
  /** One conversation's messages, by its slug (ignoring case); absent: every conversation's. */
  conversationSlug?: string | undefined;
  page?: number | undefined;
  /** Messages posted at or after this instant (ISO 8601 with its offset). */
  createdAfter?: string | undefined;
  /** Messages posted before this instant. */
  createdBefore?: string | undefined;
}

/**
 * get_messages: the account's messages (of one conversation, or of all), newest first, 50 a
 * page counted from 1, within the times asked. A slug that names no conversation is a 404 (no
 * fallback to another, as get_conversation's lookup has); no message on the page is the spec's
 * error body, as for conversations. Hidden messages are not shown.
 */
export async function getMessages(
  deps: { messageStore: MessageStore },
  account: AccountContext,
  input: GetMessagesInput,
): Promise<{ page: WireJson<GetMessagesAnswer>; position: PagePosition }> {
  if (input.page !== undefined && input.page > MAX_PAGE) throw new DomainError('message_not_found');
  let window: ReturnType<typeof pageWindow>;
  try {
    window = pageWindow(input.page);
  } catch (e) {
    throw new DomainError('invalid_input', (e as Error).message);
  }
  const instant = (name: string, value: string | undefined) => {
    if (value === undefined) return null;
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) throw new DomainError('invalid_input', `${name}: not an ISO 8601 date and time`);
    return new Date(ms).toISOString();
  };
  const { page, count, hasMore, conversationFound } = await deps.messageStore.page(
    account,
    {
      conversationSlugKey: input.conversationSlug === undefined ? null : slugKey(input.conversationSlug),
      createdAfter: instant('created_after', input.createdAfter),
      createdBefore: instant('created_before', input.createdBefore),
    },
    window,
  );
  if (!conversationFound) throw new DomainError('conversation_not_found');
  if (count === 0) throw new DomainError('message_not_found');
  const number = input.page ?? FIRST_PAGE;
  return { page, position: { page: number, hasPrevious: number > FIRST_PAGE, hasNext: hasMore } };
}
