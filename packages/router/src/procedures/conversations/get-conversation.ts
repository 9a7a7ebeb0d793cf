import { getConversation } from '@convo/domain';
import { operation, procedureOf } from '../../operation.ts';
import { getConversationSpec } from './get-conversation.types.ts';

export const getConversationProcedure = procedureOf(getConversationSpec)
  .input(getConversationSpec.input.prefault({}))
  .query(({ ctx, input }) => getConversation(ctx.services, ctx.account, input));

export const getConversationOperation = operation(getConversationSpec, getConversationProcedure);
