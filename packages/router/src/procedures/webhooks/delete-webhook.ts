import { unsubscribeWebhook } from '@convo/domain';
import { operation } from '../../operation.ts';
import { authedProcedure } from '../../trpc.ts';
import { deleteWebhookSpec, ZDeletedWebhook } from './delete-webhook.types.ts';

export const deleteWebhookProcedure = authedProcedure
  .meta(deleteWebhookSpec.meta)
  .input(deleteWebhookSpec.input)
  .output(ZDeletedWebhook)
  .mutation(async ({ ctx, input }) => {
    await unsubscribeWebhook(ctx.services, ctx.account, input.id);
    return { id: input.id, deleted: true as const };
  });

export const deleteWebhookOperation = operation(deleteWebhookSpec, deleteWebhookProcedure);
