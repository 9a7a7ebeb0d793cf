import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { listedConversationExample, notFound, ZConversation } from './conversation.types.ts';

export const ZGetConversationInput = z.object({
  title: z.string().meta({ description: 'Exact title, ignoring case; the most recent match wins.' }).optional(),
  slug: z.string().meta({ description: 'Exact slug, ignoring case.' }).optional(),
});

export const getConversationSpec = {
  name: 'conversations.get',
  label: 'get_conversation',
  conditional: true,
  input: ZGetConversationInput,
  output: ZConversation,
  meta: {
    openapi: {
      method: 'GET',
      path: '/conversations/get_conversation',
      operationId: 'getConversation',
      summary: 'Get one conversation by title or slug, or the most recent one',
      tags: ['conversations'],
      protect: true,
    },
  },
  doc: {
    description:
      'Title and slug match exactly, ignoring case; the most recently created match wins (ties: the higher id). ' +
      'When both are given both must match. With no parameter, or no match, the most recent conversation is returned.',
    example: {
      ...listedConversationExample,
      conversation_created_time: '2022-02-01 17:21:09.123456',
      conversation_credated_time_nice: 'February 1st, 2022 05:21PM UTC',
    },
    errors: {
      '404': notFound('The account has no conversation'),
      '422': { description: 'A parameter is given twice', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
