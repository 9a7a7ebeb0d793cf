import { updateTeamMember } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { updateTeamMemberSpec } from './update-team-member.types.ts';

export const updateTeamMemberOperation = defineOperation(updateTeamMemberSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) =>
    updateTeamMember(ctx.services, ctx.account, 'account', {
      email: input.email,
      name: input.name,
      role: input.role === 'none' ? null : input.role,
    }),
  ),
);
