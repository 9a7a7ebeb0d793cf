import { intakePageFields, ZIntakePage } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { intakePageExample, intakePageRules } from './intake-page.types.ts';

const { name, ...optional } = intakePageFields;

export const ZCreateIntakePageInput = z.object({
  name,
  key: optional.key.optional(),
  title: optional.title.optional(),
  welcome_text: optional.welcome_text.optional(),
  welcome_recording_message_id: optional.welcome_recording_message_id.optional(),
  primary: optional.primary.optional(),
  workflow_id: optional.workflow_id.optional(),
  allow_anonymous: optional.allow_anonymous.optional(),
  team: optional.team.optional(),
  disabled: optional.disabled.optional(),
});

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
