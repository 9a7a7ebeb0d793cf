import type { Operation } from './operation.ts';
import { getAccountOperation, getAccountProcedure } from './procedures/account/get-account.ts';
import {
  createConversationOperation,
  createConversationProcedure,
} from './procedures/conversations/create-conversation.ts';
import { getConversationOperation, getConversationProcedure } from './procedures/conversations/get-conversation.ts';
import {
  listConversationsOperation,
  listConversationsProcedure,
} from './procedures/conversations/list-conversations.ts';
import { createWebhookOperation, createWebhookProcedure } from './procedures/webhooks/create-webhook.ts';
import { deleteWebhookOperation, deleteWebhookProcedure } from './procedures/webhooks/delete-webhook.ts';
import { listWebhooksOperation, listWebhooksProcedure } from './procedures/webhooks/list-webhooks.ts';
import { router } from './trpc.ts';

/** The typed tRPC surface: what `@convo/client` and any TypeScript frontend call. */
export const appRouter = router({
  conversations: router({
    create: createConversationProcedure,
    get: getConversationProcedure,
    list: listConversationsProcedure,
  }),
  account: router({ get: getAccountProcedure }),
  webhooks: router({
    create: createWebhookProcedure,
    list: listWebhooksProcedure,
    delete: deleteWebhookProcedure,
  }),
});

export type AppRouter = typeof appRouter;

/** Every operation with its declaration: the REST routes, the OpenAPI document and metrics come from these. */
export const operations: readonly Operation[] = [
  createConversationOperation,
  getConversationOperation,
  listConversationsOperation,
  getAccountOperation,
  createWebhookOperation,
  listWebhooksOperation,
  deleteWebhookOperation,
];
