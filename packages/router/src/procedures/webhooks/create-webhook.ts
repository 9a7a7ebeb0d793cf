import { createWebhook, WEBHOOK_EVENT_TYPES } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { createWebhookSpec } from './create-webhook.types.ts';

export const createWebhookOperation = defineOperation(createWebhookSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) =>
    createWebhook(ctx.services, ctx.account, { url: input.url, events: input.events ?? WEBHOOK_EVENT_TYPES }),
  ),
);
