import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { WireJson } from '../shared/wire-json.ts';
import type { ConversationChanges, UpdateConversationStore } from './ports.ts';
import { titleKey, titleProblem } from './title.ts';
import type { ConversationView } from './views.ts';

/** What a caller may change of a conversation: its title and the settings it was made with. */
export interface UpdateConversationInput {
  conversationId: number;
  title?: string | undefined;
  anyoneCanPost?: boolean | undefined;
  allowAnonymousMessages?: boolean | undefined;
  allowSearchEngines?: boolean | undefined;
}

/**
 * update_conversation: renames one of the account's conversations and changes its settings (each
 * only when given; at least one must be), and answers it as get_conversation does. Its slug, and
 * so its addresses, never change.
 */
export async function updateConversation(
  deps: { updateConversationStore: UpdateConversationStore },
  account: Pick<AccountContext, 'id' | 'host' | 'key'>,
  input: UpdateConversationInput,
): Promise<WireJson<ConversationView>> {
  const { title, anyoneCanPost, allowAnonymousMessages, allowSearchEngines } = input;
  if (
    title === undefined &&
    anyoneCanPost === undefined &&
    allowAnonymousMessages === undefined &&
    allowSearchEngines === undefined
  ) {
    throw new DomainError(
      'invalid_input',
      'give at least one of title, anyone_can_post, allow_anonymous_messages, allow_search_engines',
    );
  }
  const problem = title === undefined ? null : titleProblem(title);
  if (problem) throw new DomainError('invalid_input', problem);
  const changes: ConversationChanges = {
    title: title === undefined ? undefined : { title, key: titleKey(title) },
    anyoneCanPost,
    allowAnonymousMessages,
    allowSearchEngines,
  };
  const view = await deps.updateConversationStore.updateConversation(account, input.conversationId, changes);
  if (!view) throw new DomainError('conversation_not_found');
  return view;
}
