import { intakePageFields, ZIntakePage } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { intakePageExample, intakePageRules } from './intake-page.types.ts';

/** A page's name, and any other of its members (the rest get their defaults). */
export const ZCreateIntakePageInput = z.object(intakePageFields).partial().required({ name: true });

export const createIntakePageSpec = {
  input: ZCreateIntakePageInput,
  output: ZIntakePage,
  meta: {
    successStatus: 201,
    openapi: {
      method: 'POST',
      path: '/intake_pages',
      summary: 'Make an intake page',
      tags: ['intake pages'],
      protect: true,
      contentTypes: ['application/json'],
      successDescription: 'The page was made',
    },
  },
  doc: {
    description: `Not in the spec. ${intakePageRules}`,
    example: intakePageExample,
    requestExamples: {
      'application/json': {
        name: 'Contact us',
        key: 'contact-us',
        title: 'Talk to Acme',
        primary: true,
        workflow_id: 4,
        team: ['sam@acme.example'],
      },
    },
    errors: {
      ...BODY_ERRORS,
      '409': {
        description: 'The key is already used by another page of the account',
        codes: ['intake_page_key_taken'],
      },
      '422': {
        description:
          'A member breaks its rule (a workflow or team member that is not the account’s), or the account has as many pages as it may',
        codes: ['invalid_input', 'intake_page_limit_reached'],
      },
    },
  },
} satisfies OperationSpec;
