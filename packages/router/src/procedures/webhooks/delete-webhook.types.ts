import { DOMAIN_ERRORS, ZWebhookId } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';

export const ZDeleteWebhookInput = z.object({ id: ZWebhookId });

export const ZDeletedWebhook = z.object({ id: ZWebhookId, deleted: z.literal(true) }).meta({ id: 'DeletedWebhook' });

export const deleteWebhookSpec = {
  input: ZDeleteWebhookInput,
  output: ZDeletedWebhook,
  meta: {
    openapi: {
      method: 'DELETE',
      path: '/webhooks/{id}',
      summary: 'Unsubscribe an endpoint',
      tags: ['webhooks'],
      protect: true,
    },
  },
  doc: {
    description:
      'Nothing more is sent to the endpoint, and its pending deliveries are dropped. An endpoint of another ' +
      'account answers 404, as one that does not exist does.',
    example: { id: 7, deleted: true },
    errors: {
      '404': { description: DOMAIN_ERRORS.webhook_not_found.message, codes: ['webhook_not_found'] },
      '422': { description: 'The id is not a whole number from 1', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
