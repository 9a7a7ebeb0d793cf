import { z } from 'zod';
import type { Meta } from '../../trpc.ts';
import { ZListedConversation, ZPage } from './conversation.types.ts';

export const ZListConversationsInput = z.object({
  page: ZPage.meta({ description: 'Page number, counted from 1; 50 conversations a page.' }).optional(),
});

export const ZConversationList = z.object({ conversations: z.array(ZListedConversation) });

export const listConversationsMeta = {
  openapi: {
    method: 'GET',
    path: '/conversations/get_conversations',
    operationId: 'getConversations',
    summary: 'Get a page of conversations, newest first',
    tags: ['conversations'],
    protect: true,
  },
} satisfies Meta;
