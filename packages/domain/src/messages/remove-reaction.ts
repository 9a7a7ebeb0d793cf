import type { AccountContext } from '../records.ts';
import { changeReaction, type ReactionInput } from './add-reaction.ts';
import type { MessageReactionsAnswer } from './reactions.ts';

/** remove_reaction: changeReaction's taking back (one that is not there changes nothing). */
export const removeReaction = (
  deps: Parameters<typeof changeReaction>[0],
  account: AccountContext,
  input: ReactionInput,
): Promise<MessageReactionsAnswer> => changeReaction(deps, account, input, 'remove');
