import { ZCreatedConversation, ZSlug, ZTitle } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, idempotencyDoc, type OperationSpec } from '../../operation.ts';
import { conversationExample } from './conversation.types.ts';

export const ZCreateConversationInput = z.object({
  title: ZTitle.optional(),
  slug: ZSlug.optional(),
  anyone_can_post: z.boolean().optional(),
  allow_anonymous_messages: z.boolean().optional(),
  allow_search_engines: z.boolean().optional(),
  primary_intake_page: z.boolean().optional(),
  intake_page_id: z.number().int().min(1).max(2_147_483_647).optional(),
});

export type TCreateConversationInput = z.infer<typeof ZCreateConversationInput>;

export const createConversationSpec = {
  input: ZCreateConversationInput.prefault({}),
  output: ZCreatedConversation,
  meta: {
    successStatus: 201,
    openapi: {
      method: 'POST',
      path: '/conversations/create_conversation',
      summary: 'Create a conversation',
      tags: ['conversations'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
      successDescription: 'The conversation was created',
    },
  },
  doc: {
    description:
      'Every member is optional; omitted flags take the account defaults, an omitted title the account naming ' +
      'template, an omitted slug 25 random hex characters. Members a client may not set (`id`, URLs, ' +
      '`via_primary_intake_page`, …) are ignored. Form bodies take booleans as `true`/`false`.',
    example: { ...conversationExample, tags: [], messages: [] },
    requestExamples: {
      'application/json': { title: 'Billing question', slug: 'billing-question' },
      'application/x-www-form-urlencoded': {
        title: 'Billing question',
        slug: 'billing-question',
        anyone_can_post: true,
      },
    },
    ...idempotencyDoc(
      'One header of up to 255 printable ASCII characters other than a comma (HTTP joins repeated headers ' +
        'with commas, so a comma is refused as a repeated key), remembered for 24 hours per account. A retry with the same key and ' +
        'the same body answers the first 201 again (status and body) and creates nothing; the same key with a ' +
        'different body is refused with 422 `idempotency_key_reused`. A concurrent retry waits for the first. ' +
        'Refused creates are not remembered: their retry runs again.',
      'order-1234-conversation',
    ),
    errors: {
      ...BODY_ERRORS,
      '409': {
        description: 'The slug is already used by a conversation of this account (ignoring case)',
        codes: ['slug_taken'],
      },
      '422': {
        description:
          'A member breaks its rule, the intake page cannot be used, or the Idempotency-Key was used with another body',
        codes: ['invalid_input', 'intake_page_unusable', 'idempotency_key_reused'],
      },
    },
  },
} satisfies OperationSpec;
