import { subscribeWebhook, WEBHOOK_EVENT_TYPES } from '@convo/domain';
import { operation, procedureOf } from '../../operation.ts';
import { createWebhookSpec } from './create-webhook.types.ts';

export const createWebhookProcedure = procedureOf(createWebhookSpec)
  .input(createWebhookSpec.input)
  .mutation(({ ctx, input }) =>
    subscribeWebhook(ctx.services, ctx.account, { url: input.url, events: input.events ?? WEBHOOK_EVENT_TYPES }),
  );

export const createWebhookOperation = operation(createWebhookSpec, createWebhookProcedure);
