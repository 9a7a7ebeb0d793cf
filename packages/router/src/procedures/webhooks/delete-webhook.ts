import { unsubscribeWebhook } from '@convo/domain';
import { operation, procedureOf } from '../../operation.ts';
import { deleteWebhookSpec } from './delete-webhook.types.ts';

export const deleteWebhookProcedure = procedureOf(deleteWebhookSpec)
  .input(deleteWebhookSpec.input)
  .mutation(async ({ ctx, input }) => {
    await unsubscribeWebhook(ctx.services, ctx.account, input.id);
    return { id: input.id, deleted: true as const };
  });

export const deleteWebhookOperation = operation(deleteWebhookSpec, deleteWebhookProcedure);
