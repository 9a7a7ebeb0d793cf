import { ZMessageTemplate } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { messageTemplateExample, messageTemplateRules } from './message-template.types.ts';

export const ZListMessageTemplatesInput = z.object({});

export const ZMessageTemplateList = z
  .object({ message_templates: z.array(ZMessageTemplate) })
  .meta({ id: 'MessageTemplateList', description: "The account's message templates, by name." });

export const listMessageTemplatesSpec = {
  input: ZListMessageTemplatesInput.prefault({}),
  output: ZMessageTemplateList,
  meta: {
    openapi: {
      method: 'GET',
      path: '/message_templates',
      summary: "The account's message templates",
      tags: ['message templates'],
      protect: true,
    },
  },
  doc: {
    description: messageTemplateRules,
    example: { message_templates: [messageTemplateExample] },
    errors: {},
  },
} satisfies OperationSpec;
