import { intakePageFields, ZIntakePage, ZIntakePageId } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { intakePageExample, intakePageNotFound, intakePageRules } from './intake-page.types.ts';

/** Every member of a page, each optional: what is given changes. */
export const ZChangeIntakePageInput = z.object({ id: ZIntakePageId, ...z.object(intakePageFields).partial().shape });

export const changeIntakePageSpec = {
  input: ZChangeIntakePageInput,
  output: ZIntakePage,
  meta: {
    openapi: {
      method: 'PATCH',
      path: '/intake_pages/{id}',
      summary: 'Change, disable or enable an intake page',
      tags: ['intake pages'],
      protect: true,
      contentTypes: ['application/json'],
    },
  },
  doc: {
    description:
      'Not in the spec. Changes what is given and answers the page as it is now; conversations already started ' +
      `keep what they got. ${intakePageRules} A page of another account answers 404, as one that does not exist does.`,
    example: { ...intakePageExample, disabled: true },
    requestExamples: { 'application/json': { disabled: true } },
    errors: {
      ...BODY_ERRORS,
      '404': intakePageNotFound,
      '409': {
        description: 'The key is already used by another page of the account',
        codes: ['intake_page_key_taken'],
      },
      '422': { description: 'A member breaks its rule', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
