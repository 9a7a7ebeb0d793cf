import { PAGE_SIZE, ZGetMessagesAnswer } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { ZPage } from '../conversations/conversation.types.ts';
import { messageDetailExample } from './message.types.ts';

const instant = (what: string) =>
  z.iso.datetime({ offset: true }).meta({
    description: `${what}, as ISO 8601 with its offset (\`2026-11-27T14:00:00Z\`, \`2026-11-27T15:00:00+01:00\`).`,
  });

export const ZGetMessagesInput = z
  .object({
    conversation_slug: z
      .string()
      .max(200)
      .meta({
        description:
          "One conversation's messages, by its slug (ignoring case); without it, the messages of every conversation of " +
          'the account. A slug that names no conversation is a 404: there is no fallback.',
      }),
    page: ZPage.meta({ description: `Page number, counted from 1; ${PAGE_SIZE} messages a page, newest first.` }),
    created_after: instant('Only messages posted at or after this instant'),
    created_before: instant('Only messages posted before this instant'),
  })
  .partial();

export const getMessagesSpec = {
  input: ZGetMessagesInput.prefault({}),
  output: ZGetMessagesAnswer,
  meta: {
    openapi: {
      method: 'GET',
      path: '/messages/get_messages',
      summary: "Get a page of the account's messages, newest first",
      tags: ['messages'],
      protect: true,
    },
  },
  doc: {
    description: `Up to ${PAGE_SIZE} messages a page, newest first, of one conversation or of all the account's; pages count from 1, and a page past the last (or no message at all) is a 404 with the spec's error body. Hidden messages are not listed.`,
    example: { messages: [messageDetailExample] },
    headers: {
      Link: {
        description: 'Links to the next, previous and first pages, as get_conversations has them.',
        schema: { type: 'string' },
        example: '</api/v1/messages/get_messages?page=3>; rel="next"',
      },
    },
    errors: {
      '404': {
        description:
          'No message is found (none at all, none in the times asked, or a page past the last), or the slug names no conversation',
        codes: ['message_not_found', 'conversation_not_found'],
      },
      '422': { description: 'The page is not a whole number ≥ 1, or a time is not ISO 8601', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
