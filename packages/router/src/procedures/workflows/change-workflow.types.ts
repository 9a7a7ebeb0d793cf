import { ZWorkflowDefinition, ZWorkflowId, ZWorkflowName, ZWorkflowSteps } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { workflowExample, workflowNotFound, workflowRules } from './workflow.types.ts';

export const ZChangeWorkflowInput = z.object({
  id: ZWorkflowId,
  name: ZWorkflowName.optional(),
  steps: ZWorkflowSteps.optional().meta({ description: 'The new steps, replacing them all.' }),
  disabled: z.boolean().optional().meta({
    description: 'true: intake pages stop applying it to new conversations; false: they apply it again.',
  }),
});

export const changeWorkflowSpec = {
  input: ZChangeWorkflowInput,
  output: ZWorkflowDefinition,
  meta: {
    openapi: {
      method: 'PATCH',
      path: '/workflows/{id}',
      summary: 'Change, disable or enable a workflow',
      tags: ['workflows'],
      protect: true,
      contentTypes: ['application/json'],
    },
  },
  doc: {
    description:
      'Not in the spec. Changes what is given (name, steps, disabled) and answers the workflow as it is now. ' +
      `Conversations that already have a copy keep it as it was. ${workflowRules} A workflow of another account ` +
      'answers 404, as one that does not exist does.',
    example: { ...workflowExample, disabled: true },
    requestExamples: { 'application/json': { disabled: true } },
    errors: {
      ...BODY_ERRORS,
      '404': workflowNotFound,
      '422': { description: 'A member breaks its rule', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
