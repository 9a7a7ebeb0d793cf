import { PAGE_SIZE, ZConversationList } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { listedConversationExample, notFound, ZPage } from './conversation.types.ts';

export const ZGetConversationsInput = z.object({
  page: ZPage.meta({ description: 'Page number, counted from 1; 50 conversations a page.' }).optional(),
});

export const getConversationsSpec = {
  conditional: true,
  input: ZGetConversationsInput.prefault({}),
  output: ZConversationList,
  meta: {
    openapi: {
      method: 'GET',
      path: '/conversations/get_conversations',
      summary: 'Get a page of conversations, newest first',
      tags: ['conversations'],
      protect: true,
    },
  },
  doc: {
    description: `Up to ${PAGE_SIZE} conversations a page, newest created first; pages count from 1, and a page past the last is a 404.`,
    example: { conversations: [listedConversationExample] },
    headers: {
      Link: {
        description:
          'GitHub-style links to the next, previous and first pages (`rel="next"`, `rel="prev"`, `rel="first"`), ' +
          'each present only when that page exists. Relative to this server unless the operator set its public ' +
          "address (`PUBLIC_URL`), never built from the request's Host header.",
        schema: { type: 'string' },
        example: '</api/v1/conversations/get_conversations?page=3>; rel="next"',
      },
    },
    errors: {
      '404': notFound('The account has no conversations, or the page is past the last one'),
      '422': { description: 'The page is not a whole number ≥ 1', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
