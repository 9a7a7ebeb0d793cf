import type { AccountContext, ConversationState } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { WireJson } from '../shared/wire-json.ts';
import type { ConversationChanges, UpdateConversationStore } from './ports.ts';
import { titleKey, titleProblem } from './title.ts';
import { normalTags, tagsProblem } from './triage.ts';
import type { UpdatedConversationView } from './views.ts';

/** What a caller may change of a conversation: its title, the settings it was made with, and its triage. */
export interface UpdateConversationInput {
  conversationId: number;
  title?: string | undefined;
  anyoneCanPost?: boolean | undefined;
  allowAnonymousMessages?: boolean | undefined;
  allowSearchEngines?: boolean | undefined;
  state?: ConversationState | undefined;
  /** The teammate it is assigned to, by e-mail address; null: nobody. */
  assigneeEmail?: string | null | undefined;
  archived?: boolean | undefined;
  /** Its tags, all of them: those not named are taken off. */
  tags?: readonly string[] | undefined;
}

const CHANGEABLE = [
  'title',
  'anyoneCanPost',
  'allowAnonymousMessages',
  'allowSearchEngines',
  'state',
  'assigneeEmail',
  'archived',
  'tags',
] as const satisfies readonly (keyof UpdateConversationInput)[];

/**
 * update_conversation: renames one of the account's conversations, changes its settings and its
 * triage (each only when given; at least one must be), and answers it as get_conversation does,
 * with its triage. Its slug, and so its addresses, never change. An assignee must be on the
 * account's team.
 */
export async function updateConversation(
  deps: { updateConversationStore: UpdateConversationStore },
  account: Pick<AccountContext, 'id' | 'host' | 'key'>,
  input: UpdateConversationInput,
): Promise<WireJson<UpdatedConversationView>> {
  if (CHANGEABLE.every((name) => input[name] === undefined)) {
    throw new DomainError(
      'invalid_input',
      'give at least one of title, anyone_can_post, allow_anonymous_messages, allow_search_engines, state, ' +
        'assignee_email, archived, tags',
    );
  }
  const { title, tags, assigneeEmail } = input;
  const problem = (title === undefined ? null : titleProblem(title)) ?? (tags === undefined ? null : tagsProblem(tags));
  if (problem) throw new DomainError('invalid_input', problem);
  let assigneeId: number | null | undefined = assigneeEmail === null ? null : undefined;
  if (assigneeEmail) {
    assigneeId = await deps.updateConversationStore.teamMemberId(account.id, assigneeEmail);
    if (assigneeId === null) {
      throw new DomainError('invalid_input', `assignee_email: ${assigneeEmail} is not on the account's team`);
    }
  }
  const changes: ConversationChanges = {
    title: title === undefined ? undefined : { title, key: titleKey(title) },
    anyoneCanPost: input.anyoneCanPost,
    allowAnonymousMessages: input.allowAnonymousMessages,
    allowSearchEngines: input.allowSearchEngines,
    state: input.state,
    assigneeId,
    archived: input.archived,
    tags: tags === undefined ? undefined : normalTags(tags),
  };
  const view = await deps.updateConversationStore.updateConversation(account, input.conversationId, changes);
  if (!view) throw new DomainError('conversation_not_found');
  return view;
}
