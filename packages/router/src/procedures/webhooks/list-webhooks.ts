import { listWebhookEndpoints } from '@convo/domain';
import { operation } from '../../operation.ts';
import { authedProcedure } from '../../trpc.ts';
import { listWebhooksSpec, ZWebhookList } from './list-webhooks.types.ts';

export const listWebhooksProcedure = authedProcedure
  .meta(listWebhooksSpec.meta)
  .input(listWebhooksSpec.input.prefault({}))
  .output(ZWebhookList)
  .query(async ({ ctx }) => ({ webhooks: await listWebhookEndpoints(ctx.services, ctx.account) }));

export const listWebhooksOperation = operation(listWebhooksSpec, listWebhooksProcedure);
