import { addConversationMember, memberAnswer } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { addConversationMemberSpec } from './add-conversation-member.types.ts';

export const addConversationMemberOperation = defineOperation(addConversationMemberSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) =>
    memberAnswer(ctx.services, ctx.account, await addConversationMember(ctx.services, ctx.account, input)),
  ),
);
