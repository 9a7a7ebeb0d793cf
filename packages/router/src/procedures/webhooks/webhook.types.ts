import { MAX_WEBHOOK_ENDPOINTS } from '@convo/domain';

/* What the webhook subscription procedures share beside the wire shapes (the domain's). */

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
