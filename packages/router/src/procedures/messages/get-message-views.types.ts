import { ZGetMessageViewsAnswer } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { ZMessageId } from './message.types.ts';

export const ZGetMessageViewsInput = z.object({
  message_id: ZMessageId,
});

export const getMessageViewsSpec = {
  input: ZGetMessageViewsInput,
  output: ZGetMessageViewsAnswer,
  meta: {
    openapi: {
      method: 'GET',
      path: '/messages/get_message_views',
      summary: "Get the plays of a message's recording (its receipts), oldest first",
      tags: ['messages'],
      protect: true,
    },
  },
  doc: {
    description:
      'Ours: the log behind get_messages’ `plays` and `played_by`. A play is counted when a viewer on the ' +
      'conversation’s page has watched its recording for 5 seconds or 75 % of it, whichever comes first (or reached ' +
      'its end), once per viewer and browser session, and never by the message’s own side (its author; the team, ' +
      'for a message by one of the team). Plays on an embed, and with JavaScript off, are not seen. Each view names ' +
      'its viewer as a message’s `author` is shown (a person signed in, or `{"anonymous": true}`). A message nobody ' +
      'played answers `plays: 0` and no views.',
    example: {
      message_id: 42,
      plays: 2,
      views: [
        {
          viewer: { anonymous: false, id: 7, name: 'Pat Client', email: 'pat@client.example.com' },
          played_at: '2026-11-27T14:05:12.345Z',
        },
        { viewer: { anonymous: true }, played_at: '2026-11-27T16:40:03.002Z' },
      ],
    },
    errors: {
      '404': { description: 'The account has no such message (or it is hidden)', codes: ['message_not_found'] },
      '422': { description: '`message_id` is missing or not a whole number ≥ 1', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
