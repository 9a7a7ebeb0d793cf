import { addMember, memberAnswer, removeMember } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { addMemberSpec, removeMemberSpec } from './members.types.ts';

export const addMemberOperation = defineOperation(addMemberSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) =>
    memberAnswer(ctx.services, ctx.account, await addMember(ctx.services, ctx.account, input)),
  ),
);

export const removeMemberOperation = defineOperation(removeMemberSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) =>
    memberAnswer(ctx.services, ctx.account, await removeMember(ctx.services, ctx.account, input)),
  ),
);
