import { ZMessageTemplateId } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { messageTemplateNotFound } from './message-template.types.ts';

export const ZDeleteMessageTemplateInput = z.object({ id: ZMessageTemplateId });

export const ZDeletedMessageTemplate = z
  .object({ id: ZMessageTemplateId, deleted: z.literal(true) })
  .meta({ id: 'DeletedMessageTemplate' });

export const deleteMessageTemplateSpec = {
  input: ZDeleteMessageTemplateInput,
  output: ZDeletedMessageTemplate,
  meta: {
    openapi: {
      method: 'DELETE',
      path: '/message_templates/{id}',
      summary: 'Delete a message template',
      tags: ['message templates'],
      protect: true,
    },
  },
  doc: {
    description:
      'Not in the spec. Takes the template out of the library; messages made from it stay as they are (their ' +
      '`message_template` keeps its id and name). A template of another account answers 404, as one that does not ' +
      'exist does.',
    example: { id: 5, deleted: true },
    errors: {
      '404': messageTemplateNotFound,
      '422': { description: 'The id is not a whole number from 1', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
