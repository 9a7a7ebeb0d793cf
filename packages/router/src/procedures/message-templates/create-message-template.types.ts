import { messageTemplateFields, ZMessageTemplate, ZRecordingKind } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { messageTemplateExample, messageTemplateNameTaken, messageTemplateRules } from './message-template.types.ts';

/** A template's name, its text or recording (or both). */
export const ZCreateMessageTemplateInput = z
  .object({ ...messageTemplateFields, recording_kind: ZRecordingKind })
  .partial()
  .required({ name: true });

export const createMessageTemplateSpec = {
  input: ZCreateMessageTemplateInput,
  output: ZMessageTemplate,
  meta: {
    successStatus: 201,
    openapi: {
      method: 'POST',
      path: '/message_templates',
      summary: 'Add a message template',
      tags: ['message templates'],
      protect: true,
      contentTypes: ['application/json', 'multipart/form-data'],
      successDescription: 'The template was added',
    },
  },
  doc: {
    description: `${messageTemplateRules} Its creator is the account's owner (on the team's site: whoever saves it).`,
    example: messageTemplateExample,
    requestExamples: {
      'application/json': {
        name: 'Refund on its way',
        text: 'Thanks for your patience! Your refund is on its way and reaches you within 5 working days.',
        recording_message_id: 311,
      },
    },
    errors: {
      ...BODY_ERRORS,
      '409': messageTemplateNameTaken,
      '422': {
        description:
          'A member breaks its rule (no text and no recording, a message without a recording kept here or of another account), or the account keeps as many templates as it may',
        codes: ['invalid_input', 'message_template_limit_reached'],
      },
    },
  },
} satisfies OperationSpec;
