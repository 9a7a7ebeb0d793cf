import { DOMAIN_ERRORS, MAX_MESSAGE_TEMPLATES } from '@convo/domain';
import type { OperationError } from '../../operation.ts';

/* What the message template procedures share beside the wire shapes (the domain's). */

export const messageTemplateExample = {
  id: 5,
  name: 'Refund on its way',
  text: 'Thanks for your patience! Your refund is on its way and reaches you within 5 working days.',
  recording: { message_type: 'video', recorded_duration_seconds: 42 },
  creator: { id: 1, name: 'Olive Owner', email: 'olive@acme.example.com' },
  created_at: '2026-11-28T10:15:00.000Z',
  updated_at: '2026-11-28T10:15:00.000Z',
} as const;

export const messageTemplateRules =
  "Not in the spec. The team's library of reusable messages: a name (unique in the account, ignoring case), a text " +
  "(create_message's rules: plain, or the safe subset of HTML) and a recording: taken from a message of the account " +
  '(`recording_message_id`), or sent with it as the file `recording` of a multipart/form-data body (measured as ' +
  'create_message’s are). ' +
  'create_message with `message_template_id`, the reply form on a conversation’s page and a workflow’s ' +
  '`post_message` step make messages from one: its text replaces the text given, a template without text puts the ' +
  'text given under its recording, and the message is its creator’s unless an author is named. Messages made from a ' +
  'template keep its id and name (`message_template`) when it is changed or deleted. An account may keep up to ' +
  `${MAX_MESSAGE_TEMPLATES} templates.`;

export const messageTemplateNotFound: OperationError = {
  description: DOMAIN_ERRORS.message_template_not_found.message,
  codes: ['message_template_not_found'],
};

export const messageTemplateNameTaken: OperationError = {
  description: DOMAIN_ERRORS.message_template_name_taken.message,
  codes: ['message_template_name_taken'],
};
