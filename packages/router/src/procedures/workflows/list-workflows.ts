import { listWorkflows } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { listWorkflowsSpec } from './list-workflows.types.ts';

export const listWorkflowsOperation = defineOperation(listWorkflowsSpec, (procedure) =>
  procedure.query(async ({ ctx }) => ({ workflows: await listWorkflows(ctx.services.workflows, ctx.account) })),
);
