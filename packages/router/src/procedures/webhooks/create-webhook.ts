import { subscribeWebhook, WEBHOOK_EVENT_TYPES } from '@convo/domain';
import { operation } from '../../operation.ts';
import { authedProcedure } from '../../trpc.ts';
import { createWebhookSpec, ZSubscribedWebhook } from './create-webhook.types.ts';

export const createWebhookProcedure = authedProcedure
  .meta(createWebhookSpec.meta)
  .input(createWebhookSpec.input)
  .output(ZSubscribedWebhook)
  .mutation(({ ctx, input }) =>
    subscribeWebhook(ctx.services, ctx.account, { url: input.url, events: input.events ?? WEBHOOK_EVENT_TYPES }),
  );

export const createWebhookOperation = operation(createWebhookSpec, createWebhookProcedure);
