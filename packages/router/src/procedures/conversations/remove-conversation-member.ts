import { memberAnswer, removeConversationMember } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { removeConversationMemberSpec } from './remove-conversation-member.types.ts';

export const removeConversationMemberOperation = defineOperation(removeConversationMemberSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) =>
    memberAnswer(ctx.services, ctx.account, await removeConversationMember(ctx.services, ctx.account, input)),
  ),
);
