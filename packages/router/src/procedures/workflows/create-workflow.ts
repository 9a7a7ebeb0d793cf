import { createWorkflow } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { createWorkflowSpec } from './create-workflow.types.ts';

export const createWorkflowOperation = defineOperation(createWorkflowSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => createWorkflow(ctx.services.workflows, ctx.account, input, 'account')),
);
