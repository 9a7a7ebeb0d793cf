import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { WireJson } from '../shared/wire-json.ts';
import { type LookupMatch, type LookupRequest, lookupCriteria, lookupMatch, lookupProblem } from './lookup.ts';
import type { ConversationStore } from './ports.ts';
import type { ConversationView } from './views.ts';

export async function getConversation(
  deps: { conversations: ConversationStore },
  account: AccountContext,
  request: LookupRequest,
): Promise<{ view: WireJson<ConversationView>; matched: LookupMatch }> {
  const problem = lookupProblem(request);
  if (problem) throw new DomainError('invalid_input', problem);
  const criteria = lookupCriteria(request);
  const found = await deps.conversations.findOneView(account, criteria);
  if (!found) throw new DomainError('conversation_not_found');
  return { view: found.view, matched: lookupMatch(criteria, found) };
}
