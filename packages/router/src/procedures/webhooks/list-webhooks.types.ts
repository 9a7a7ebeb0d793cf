import { ZWebhookEndpoint } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { webhookEndpointExample, webhookLimits } from './webhook.types.ts';

export const ZListWebhooksInput = z.object({});

export const ZWebhookList = z
  .object({ webhooks: z.array(ZWebhookEndpoint) })
  .meta({ id: 'WebhookList', description: "The account's endpoints, oldest first; secrets are never listed." });

export const listWebhooksSpec = {
  input: ZListWebhooksInput.prefault({}),
  output: ZWebhookList,
  meta: {
    openapi: {
      method: 'GET',
      path: '/webhooks',
      summary: "The account's webhook endpoints",
      tags: ['webhooks'],
      protect: true,
    },
  },
  doc: {
    description: `Every endpoint of the account, whoever subscribed it (API or operator), with its status. ${webhookLimits}`,
    example: { webhooks: [webhookEndpointExample] },
    errors: {},
  },
} satisfies OperationSpec;
