import { authorView } from '../conversations/views.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { GetMessageViewsAnswer } from './plays.ts';
import type { PlayStore } from './ports.ts';

/**
 * get_message_views: the plays of one of the account's messages (its receipts), oldest first,
 * each with its viewer (a person, or an anonymous visitor) and time. A message the account does
 * not have, or has hidden, is a 404; one nobody played has no views.
 */
export async function getMessageViews(
  deps: { plays: PlayStore },
  account: AccountContext,
  input: { message_id: number },
): Promise<GetMessageViewsAnswer> {
  const log = await deps.plays.log(account.id, input.message_id);
  if (!log) throw new DomainError('message_not_found');
  return {
    message_id: input.message_id,
    plays: log.length,
    views: log.map((p) => ({ viewer: authorView(p.viewer), played_at: p.playedAt.toISOString() })),
  };
}
