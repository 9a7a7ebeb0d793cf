import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { notFound } from './conversation.types.ts';

export const ZDeleteConversationInput = z.object({ conversation_id: z.number().int().min(1).max(2_147_483_647) });

export const ZDeletedConversation = z
  .object({ id: z.number().int(), deleted: z.literal(true) })
  .meta({ id: 'DeletedConversation' });

export const deleteConversationSpec = {
  input: ZDeleteConversationInput,
  output: ZDeletedConversation,
  meta: {
    openapi: {
      method: 'POST',
      path: '/conversations/delete_conversation',
      summary: 'Delete a conversation',
      tags: ['conversations'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
  },
  doc: {
    description:
      'Not in the original service: deletes one of the account’s conversations (`conversation_id`, its `id`) for ' +
      'good, with its messages, members, tags and recordings; its page and embeds answer 404 from then on. ' +
      'Announces `conversation_deleted` (`{conversation: {id}}`) to the webhook endpoints subscribed to it. ' +
      'Another account’s conversation, or one already deleted, is answered as a missing one.',
    example: { id: 4, deleted: true },
    requestExamples: {
      'application/json': { conversation_id: 4 },
      'application/x-www-form-urlencoded': { conversation_id: 4 },
    },
    errors: {
      ...BODY_ERRORS,
      '404': notFound('The account has no conversation with that id'),
      '422': { description: 'conversation_id is not a whole number from 1', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
