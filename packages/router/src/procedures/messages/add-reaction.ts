import { addReaction } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { addReactionSpec } from './add-reaction.types.ts';

export const addReactionOperation = defineOperation(addReactionSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => addReaction(ctx.services, ctx.account, input)),
);
