import { deleteConversation } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { deleteConversationSpec } from './delete-conversation.types.ts';

export const deleteConversationOperation = defineOperation(deleteConversationSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) =>
    deleteConversation(ctx.services, ctx.account, { conversationId: input.conversation_id }),
  ),
);
