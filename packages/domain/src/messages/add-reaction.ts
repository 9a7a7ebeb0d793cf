import type { UpdateConversationStore } from '../conversations/ports.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { KeptReaction, ReactionStore } from './ports.ts';
import { type MessageReactionsAnswer, type ReactionName, reactionEmoji, reactorKey } from './reactions.ts';

/** A message's reactions as the API shows them. */
export const reactionsView = (kept: readonly KeptReaction[]): MessageReactionsAnswer['reactions'] =>
  kept.map((r) => ({ reaction: r.reaction, emoji: reactionEmoji(r.reaction), count: r.count, users: r.users }));

/** What add_reaction and remove_reaction are asked. */
export interface ReactionInput {
  message_id: number;
  reaction: ReactionName;
  /** Who reacts: the account's owner or a member of its team. */
  user_email: string;
}

/**
 * add_reaction, remove_reaction: a reaction by one of the account's team (`user_email`) on one of
 * its messages (not hidden), kept once of each kind per person; answered with the message's
 * reactions as they are now. Adding one already there, or taking back one that is not, changes
 * nothing and answers the same.
 */
export async function changeReaction(
  deps: { reactions: ReactionStore; updateConversationStore: UpdateConversationStore },
  account: AccountContext,
  input: ReactionInput,
  change: 'add' | 'remove',
): Promise<MessageReactionsAnswer> {
  const userId = await deps.updateConversationStore.teamMemberId(account.id, input.user_email);
  if (userId === null) {
    throw new DomainError(
      'invalid_input',
      `user_email: ${input.user_email} is not the account's owner or a member of its team`,
    );
  }
  const key = reactorKey({ userId });
  const reaction = { accountId: account.id, messageId: input.message_id, reaction: input.reaction, reactorKey: key };
  const done =
    change === 'add' ? await deps.reactions.add({ ...reaction, userId }) : await deps.reactions.remove(reaction);
  if (done === 'missing') throw new DomainError('message_not_found');
  const now = await deps.reactions.summaries(account.id, [input.message_id], key);
  return { message_id: input.message_id, reactions: reactionsView(now.get(input.message_id) ?? []) };
}

/** add_reaction: changeReaction's add. */
export const addReaction = (
  deps: Parameters<typeof changeReaction>[0],
  account: AccountContext,
  input: ReactionInput,
): Promise<MessageReactionsAnswer> => changeReaction(deps, account, input, 'add');
