import { MAX_WEBHOOK_ENDPOINTS, WEBHOOK_EVENT_TYPES } from '@convo/domain';
import { z } from 'zod';

/* Schemas shared by the webhook subscription procedures. */

export const ZWebhookEventType = z.enum(WEBHOOK_EVENT_TYPES).meta({
  id: 'WebhookEventType',
  description:
    '`conversation_created`: the conversation as get_conversation returns it. `message_created`: the message ' +
    'as it appears in `messages`, with its conversation’s `id` and `slug`.',
});

export const ZWebhookId = z.number().int().min(1).max(2_147_483_647);

export const ZWebhookEndpoint = z
  .object({
    id: ZWebhookId,
    url: z.string(),
    events: z.array(ZWebhookEventType),
    status: z.enum(['active', 'failing', 'disabled']).meta({
      description:
        '`failing`: its deliveries have failed since `failing_since` (they are retried for about 40 hours); ' +
        '`disabled`: failing for 3 days, so nothing more is sent to it. Subscribe again to start over.',
    }),
    created_at: z.string().meta({ description: 'ISO 8601, UTC.' }),
    failing_since: z.string().nullable(),
    disabled_at: z.string().nullable(),
    pending_deliveries: z.number().int().meta({ description: 'Deliveries waiting for their next attempt.' }),
  })
  .meta({ id: 'WebhookEndpoint' });

export const webhookEndpointExample = {
  id: 7,
  url: 'https://hooks.example.com/convo',
  events: ['conversation_created', 'message_created'],
  status: 'active',
  created_at: '2026-11-22T10:15:00.000Z',
  failing_since: null,
  disabled_at: null,
  pending_deliveries: 0,
};

export const webhookLimits = `An account may have up to ${MAX_WEBHOOK_ENDPOINTS} endpoints.`;
