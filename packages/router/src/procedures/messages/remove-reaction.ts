import { removeReaction } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { removeReactionSpec } from './remove-reaction.types.ts';

export const removeReactionOperation = defineOperation(removeReactionSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => removeReaction(ctx.services, ctx.account, input)),
);
