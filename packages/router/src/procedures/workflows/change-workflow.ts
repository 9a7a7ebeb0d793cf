import { changeWorkflow } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { changeWorkflowSpec } from './change-workflow.types.ts';

export const changeWorkflowOperation = defineOperation(changeWorkflowSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => {
    const { id, ...change } = input;
    return changeWorkflow(ctx.services.workflows, ctx.account, id, change, 'account');
  }),
);
