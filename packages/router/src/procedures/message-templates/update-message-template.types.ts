import { messageTemplateFields, ZMessageTemplate, ZMessageTemplateId, ZRecordingKind } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import {
  messageTemplateExample,
  messageTemplateNameTaken,
  messageTemplateNotFound,
  messageTemplateRules,
} from './message-template.types.ts';

/** Every member of a template, each optional: what is given changes. */
export const ZUpdateMessageTemplateInput = z.object({
  id: ZMessageTemplateId,
  ...z.object(messageTemplateFields).partial().shape,
  recording_kind: ZRecordingKind.optional(),
});

export const updateMessageTemplateSpec = {
  input: ZUpdateMessageTemplateInput,
  output: ZMessageTemplate,
  meta: {
    openapi: {
      method: 'PATCH',
      path: '/message_templates/{id}',
      summary: 'Change a message template',
      tags: ['message templates'],
      protect: true,
      contentTypes: ['application/json', 'multipart/form-data'],
    },
  },
  doc: {
    description:
      `${messageTemplateRules} Changes what is given (\`recording_message_id: null\` takes the recording away) and ` +
      'answers the template as it is now. A template of another account answers 404, as one that does not exist does.',
    example: { ...messageTemplateExample, name: 'Refund sent' },
    requestExamples: { 'application/json': { name: 'Refund sent' } },
    errors: {
      ...BODY_ERRORS,
      '404': messageTemplateNotFound,
      '409': messageTemplateNameTaken,
      '422': { description: 'A member breaks its rule', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
