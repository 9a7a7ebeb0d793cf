import { ZWorkflowDefinition } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { workflowExample, workflowRules } from './workflow.types.ts';

export const ZListWorkflowsInput = z.object({});

export const ZWorkflowList = z
  .object({ workflows: z.array(ZWorkflowDefinition) })
  .meta({ id: 'WorkflowList', description: "The account's workflows, oldest first, disabled ones included." });

export const listWorkflowsSpec = {
  input: ZListWorkflowsInput.prefault({}),
  output: ZWorkflowList,
  meta: {
    openapi: {
      method: 'GET',
      path: '/workflows',
      summary: "The account's workflows",
      tags: ['workflows'],
      protect: true,
    },
  },
  doc: {
    description: `Not in the spec. Every workflow of the account, as its team saved it. ${workflowRules}`,
    example: { workflows: [workflowExample] },
    errors: {},
  },
} satisfies OperationSpec;
