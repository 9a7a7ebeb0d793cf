import { WEBHOOK_EVENT_TYPES, ZSubscribedWebhook, ZWebhookEventType } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { webhookEndpointExample, webhookLimits } from './webhook.types.ts';

export const ZCreateWebhookInput = z.object({
  url: z
    .string()
    .min(1)
    .max(2048)
    .meta({
      description:
        'Where deliveries are POSTed: an https:// URL whose host resolves to public addresses only (no loopback, ' +
        'private, link-local or metadata address).',
    }),
  events: z
    .array(ZWebhookEventType)
    .min(1)
    .max(WEBHOOK_EVENT_TYPES.length * 4)
    .optional()
    .meta({ description: 'The events to receive; every event when omitted. A form body repeats the field.' }),
});

export const createWebhookSpec = {
  input: ZCreateWebhookInput,
  output: ZSubscribedWebhook,
  meta: {
    successStatus: 201,
    openapi: {
      method: 'POST',
      path: '/webhooks',
      summary: 'Subscribe an endpoint to events',
      tags: ['webhooks'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
      successDescription: 'The endpoint was subscribed; its secret is in this answer only',
    },
  },
  doc: {
    description:
      'Each event is POSTed to the endpoint as JSON `{type, timestamp, data}`, signed with the Standard Webhooks ' +
      'scheme (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 with the secret answered here). ' +
      'A non-2xx answer or no answer within 10 s is retried with backoff for about 40 hours; `webhook-id` stays the ' +
      `same across retries. ${webhookLimits}`,
    example: { ...webhookEndpointExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    requestExamples: {
      'application/json': {
        url: 'https://hooks.example.com/convo',
        events: ['conversation_created', 'message_created'],
      },
      'application/x-www-form-urlencoded': { url: 'https://hooks.example.com/convo', events: ['message_created'] },
    },
    errors: {
      ...BODY_ERRORS,
      '422': {
        description:
          'A member breaks its rule, the endpoint is not an https URL or resolves to a non-public address, or the ' +
          'account has as many endpoints as it may',
        codes: ['invalid_input', 'webhook_target_refused', 'webhook_limit_reached'],
      },
    },
  },
} satisfies OperationSpec;
