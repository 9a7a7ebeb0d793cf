import { getConversation } from '@convo/domain';
import { operation } from '../../operation.ts';
import { authedProcedure } from '../../trpc.ts';
import { ZConversation } from './conversation.types.ts';
import { getConversationSpec } from './get-conversation.types.ts';

export const getConversationProcedure = authedProcedure
  .meta(getConversationSpec.meta)
  .input(getConversationSpec.input.prefault({}))
  .output(ZConversation)
  .query(({ ctx, input }) => getConversation(ctx.services, ctx.account, input));

export const getConversationOperation = operation(getConversationSpec, getConversationProcedure);
