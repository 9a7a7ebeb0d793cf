import { listWebhooks } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { listWebhooksSpec } from './list-webhooks.types.ts';

export const listWebhooksOperation = defineOperation(listWebhooksSpec, (procedure) =>
  procedure.query(async ({ ctx }) => ({ webhooks: await listWebhooks(ctx.services, ctx.account) })),
);
