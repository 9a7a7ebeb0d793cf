import { z } from 'zod';
import type { Meta } from '../../trpc.ts';
import { exactBoolean, exactInt, ZSlug, ZTitle } from './conversation.types.ts';

export const ZCreateConversationInput = z.object({
  title: ZTitle.optional(),
  slug: ZSlug.optional(),
  anyone_can_post: exactBoolean().optional(),
  allow_anonymous_messages: exactBoolean().optional(),
  allow_search_engines: exactBoolean().optional(),
  primary_intake_page: exactBoolean().optional(),
  intake_page_id: exactInt(1, 2_147_483_647).optional(),
});

export type TCreateConversationInput = z.infer<typeof ZCreateConversationInput>;

export const createConversationMeta = {
  successStatus: 201,
  openapi: {
    method: 'POST',
    path: '/conversations/create_conversation',
    operationId: 'createConversation',
    summary: 'Create a conversation',
    tags: ['conversations'],
    protect: true,
    contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    successDescription: 'The conversation was created',
  },
} satisfies Meta;
