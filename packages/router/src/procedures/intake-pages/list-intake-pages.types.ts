import { ZIntakePage } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { intakePageExample, intakePageRules } from './intake-page.types.ts';

export const ZListIntakePagesInput = z.object({});

export const ZIntakePageList = z
  .object({ intake_pages: z.array(ZIntakePage) })
  .meta({ id: 'IntakePageList', description: "The account's intake pages, oldest first, disabled ones included." });

export const listIntakePagesSpec = {
  input: ZListIntakePagesInput.prefault({}),
  output: ZIntakePageList,
  meta: {
    openapi: {
      method: 'GET',
      path: '/intake_pages',
      summary: "The account's intake pages",
      tags: ['intake pages'],
      protect: true,
    },
  },
  doc: {
    description: `Not in the spec. ${intakePageRules}`,
    example: { intake_pages: [intakePageExample] },
    errors: {},
  },
} satisfies OperationSpec;
