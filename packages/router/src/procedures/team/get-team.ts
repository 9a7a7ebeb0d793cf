import { getTeam } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { getTeamSpec } from './get-team.types.ts';

export const getTeamOperation = defineOperation(getTeamSpec, (procedure) =>
  procedure.query(async ({ ctx }) => ({ team: await getTeam(ctx.services, ctx.account) })),
);
