import { listWebhookEndpoints } from '@convo/domain';
import { operation, procedureOf } from '../../operation.ts';
import { listWebhooksSpec } from './list-webhooks.types.ts';

export const listWebhooksProcedure = procedureOf(listWebhooksSpec)
  .input(listWebhooksSpec.input.prefault({}))
  .query(async ({ ctx }) => ({ webhooks: await listWebhookEndpoints(ctx.services, ctx.account) }));

export const listWebhooksOperation = operation(listWebhooksSpec, listWebhooksProcedure);
