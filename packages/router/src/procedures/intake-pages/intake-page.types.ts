import { DOMAIN_ERRORS, MAX_INTAKE_PAGES } from '@convo/domain';
import type { OperationError } from '../../operation.ts';

/* What the intake page procedures share beside the wire shapes (the domain's). */

export const intakePageExample = {
  id: 3,
  key: 'contact-us',
  name: 'Contact us',
  title: 'Talk to Acme',
  welcome_text: 'Tell us what you need: type it, or record a video. We answer within a day.',
  welcome_recording_message_id: null,
  conversation_title: '{name}: {words}',
  primary: true,
  workflow_id: 4,
  allow_anonymous: false,
  team: ['sam@acme.example'],
  disabled: false,
  created_at: '2026-11-22T10:15:00.000Z',
  updated_at: '2026-11-22T10:15:00.000Z',
};

export const intakePageRules =
  'An intake page is where a visitor starts a conversation with the team, at `{account_host}/p/<key>`; `create_conversation` with ' +
  '`intake_page_id` (or `primary_intake_page`) creates one as if through it, applying its workflow. Its `key` is ' +
  'unique in the account; at most one page is primary (making one primary makes the other not); a disabled page is ' +
  `unusable, as a missing one is. An account may have up to ${MAX_INTAKE_PAGES} intake pages.`;

export const intakePageNotFound: OperationError = {
  description: DOMAIN_ERRORS.intake_page_not_found.message,
  codes: ['intake_page_not_found'],
};
