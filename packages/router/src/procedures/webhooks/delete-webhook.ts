import { deleteWebhook } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { deleteWebhookSpec } from './delete-webhook.types.ts';

export const deleteWebhookOperation = defineOperation(deleteWebhookSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) => {
    await deleteWebhook(ctx.services, ctx.account, input.id);
    return { id: input.id, deleted: true as const };
  }),
);
