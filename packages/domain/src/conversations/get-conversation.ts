import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { type LookupMatch, type LookupRequest, lookupCriteria, lookupMatch, lookupProblem } from './lookup.ts';
import type { ConversationStore } from './ports.ts';
import { type ConversationView, conversationView } from './views.ts';

export async function getConversation(
  deps: { conversations: ConversationStore },
  account: AccountContext,
  request: LookupRequest,
): Promise<{ view: ConversationView; matched: LookupMatch }> {
  const problem = lookupProblem(request);
  if (problem) throw new DomainError('invalid_input', problem);
  const criteria = lookupCriteria(request);
  const record = await deps.conversations.findOne(account.id, criteria);
  if (!record) throw new DomainError('conversation_not_found');
  return { view: conversationView(account, record), matched: lookupMatch(criteria, record) };
}
