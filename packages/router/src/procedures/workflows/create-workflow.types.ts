import { ZWorkflowDefinition, ZWorkflowName, ZWorkflowSteps } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { workflowExample, workflowRules } from './workflow.types.ts';

export const ZCreateWorkflowInput = z.object({
  name: ZWorkflowName,
  steps: ZWorkflowSteps,
});

export const createWorkflowSpec = {
  input: ZCreateWorkflowInput,
  output: ZWorkflowDefinition,
  meta: {
    successStatus: 201,
    openapi: {
      method: 'POST',
      path: '/workflows',
      summary: 'Save a new workflow',
      tags: ['workflows'],
      protect: true,
      contentTypes: ['application/json'],
      successDescription: 'The workflow was saved',
    },
  },
  doc: {
    description: `Not in the spec. Saves a workflow for intake pages to apply. ${workflowRules}`,
    example: workflowExample,
    requestExamples: { 'application/json': { name: workflowExample.name, steps: workflowExample.steps } },
    errors: {
      ...BODY_ERRORS,
      '422': {
        description:
          'A member breaks its rule (an unknown trigger or action, a bad delay, a step naming someone not on the ' +
          'team), or the account has as many workflows as it may',
        codes: ['invalid_input', 'workflow_limit_reached'],
      },
    },
  },
} satisfies OperationSpec;
