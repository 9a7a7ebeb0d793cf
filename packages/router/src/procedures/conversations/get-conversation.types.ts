import { ZConversation } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { listedConversationExample, notFound } from './conversation.types.ts';

export const ZGetConversationInput = z.object({
  title: z.string().meta({ description: 'Exact title, ignoring case; the most recent match wins.' }).optional(),
  slug: z.string().meta({ description: 'Exact slug, ignoring case.' }).optional(),
});

export const getConversationSpec = {
  conditional: true,
  input: ZGetConversationInput.prefault({}),
  output: ZConversation,
  meta: {
    openapi: {
      method: 'GET',
      path: '/conversations/get_conversation',
      summary: 'Get one conversation by title or slug, or the most recent one',
      tags: ['conversations'],
      protect: true,
    },
  },
  doc: {
    description:
      'Title and slug match exactly, ignoring case; the most recently created match wins (ties: the higher id). ' +
      'When both are given both must match. With no parameter, or no match, the most recent conversation is returned; ' +
      'the Conversation-Matched header says which it was, so a client can tell a typo from a match.',
    example: {
      ...listedConversationExample,
      conversation_created_time: '2022-02-01 17:21:09.123456',
      conversation_credated_time_nice: 'February 1st, 2022 05:21PM UTC',
    },
    headers: {
      'Conversation-Matched': {
        description:
          'Which keys the answer matched: `title`, `slug`, or `title, slug` when both were given; `none` when no key ' +
          'was given or nothing matched, and the answer is the most recent conversation.',
        schema: { type: 'string', enum: ['title', 'slug', 'title, slug', 'none'] },
      },
    },
    errors: {
      '404': notFound('The account has no conversation'),
      '422': { description: 'A parameter is given twice', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
