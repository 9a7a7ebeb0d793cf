import { ZConversation, ZTitle } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { listedConversationExample, notFound } from './conversation.types.ts';

export const ZUpdateConversationInput = z.object({
  conversation_id: z.number().int().min(1).max(2_147_483_647),
  title: ZTitle.optional(),
  anyone_can_post: z.boolean().optional(),
  allow_anonymous_messages: z.boolean().optional(),
  allow_search_engines: z.boolean().optional(),
});

export const updateConversationSpec = {
  input: ZUpdateConversationInput,
  output: ZConversation,
  meta: {
    openapi: {
      method: 'POST',
      path: '/conversations/update_conversation',
      summary: 'Rename a conversation or change its settings',
      tags: ['conversations'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
  },
  doc: {
    description:
      'Not in the original service: renames one of the account’s conversations (`conversation_id`, its `id`) ' +
      'and changes the settings it was made with, each only when given; at least one must be. Its slug, and so ' +
      'its URLs, never change. Answers the conversation as get_conversation does, and announces ' +
      '`conversation_updated` to the webhook endpoints subscribed to it. Another account’s conversation is ' +
      'answered as a missing one.',
    example: {
      ...listedConversationExample,
      title: 'Tom Tester: invoice #1042',
      conversation_created_time: '2022-02-01 17:21:09.123456',
      conversation_credated_time_nice: 'February 1st, 2022 05:21PM UTC',
    },
    requestExamples: {
      'application/json': { conversation_id: 4, title: 'Tom Tester: invoice #1042' },
      'application/x-www-form-urlencoded': { conversation_id: 4, anyone_can_post: false },
    },
    errors: {
      ...BODY_ERRORS,
      '404': notFound('The account has no conversation with that id'),
      '422': { description: 'A member breaks its rule, or nothing is given to change', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
