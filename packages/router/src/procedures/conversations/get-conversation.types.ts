import { z } from 'zod';
import type { Meta } from '../../trpc.ts';

export const ZGetConversationInput = z.object({
  title: z.string().meta({ description: 'Exact title, ignoring case; the most recent match wins.' }).optional(),
  slug: z.string().meta({ description: 'Exact slug, ignoring case.' }).optional(),
});

export const getConversationMeta = {
  openapi: {
    method: 'GET',
    path: '/conversations/get_conversation',
    operationId: 'getConversation',
    summary: 'Get one conversation by title or slug, or the most recent one',
    tags: ['conversations'],
    protect: true,
  },
} satisfies Meta;
