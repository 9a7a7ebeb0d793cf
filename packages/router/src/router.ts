import type { Context } from './context.ts';
import type { Operation } from './operation.ts';
import { getAccountOperation } from './procedures/account/get-account.ts';
import { createConversationOperation } from './procedures/conversations/create-conversation.ts';
import { getConversationOperation } from './procedures/conversations/get-conversation.ts';
import { listConversationsOperation } from './procedures/conversations/list-conversations.ts';
import { addMemberOperation, removeMemberOperation } from './procedures/conversations/members.ts';
import { changeIntakePageOperation } from './procedures/intake-pages/change-intake-page.ts';
import { createIntakePageOperation } from './procedures/intake-pages/create-intake-page.ts';
import { listIntakePagesOperation } from './procedures/intake-pages/list-intake-pages.ts';
import { createWebhookOperation } from './procedures/webhooks/create-webhook.ts';
import { deleteWebhookOperation } from './procedures/webhooks/delete-webhook.ts';
import { listWebhooksOperation } from './procedures/webhooks/list-webhooks.ts';
import { changeWorkflowOperation } from './procedures/workflows/change-workflow.ts';
import { createWorkflowOperation } from './procedures/workflows/create-workflow.ts';
import { listWorkflowsOperation } from './procedures/workflows/list-workflows.ts';
import { createCallerFactory, router } from './trpc.ts';

/** Every operation, by its procedure's path: the one place an operation is registered. */
const procedures = {
  conversations: {
    create: createConversationOperation,
    get: getConversationOperation,
    list: listConversationsOperation,
    addMember: addMemberOperation,
    removeMember: removeMemberOperation,
  },
  account: { get: getAccountOperation },
  webhooks: {
    create: createWebhookOperation,
    list: listWebhooksOperation,
    delete: deleteWebhookOperation,
  },
  workflows: {
    create: createWorkflowOperation,
    list: listWorkflowsOperation,
    change: changeWorkflowOperation,
  },
  intakePages: {
    create: createIntakePageOperation,
    list: listIntakePagesOperation,
    change: changeIntakePageOperation,
  },
};

/** The typed tRPC surface: what `@convo/client` and any TypeScript frontend call. */
export const appRouter = router(procedures);

export type AppRouter = typeof appRouter;

/** Every operation with its declaration and path: the REST routes, the OpenAPI document and metrics come from these. */
export const operations: readonly Operation[] = Object.entries(procedures).flatMap(([area, group]) =>
  Object.entries(group).map(([verb, procedure]) => ({ ...procedure.spec, name: `${area}.${verb}` })),
);

const callerOf = createCallerFactory(appRouter);

/**
 * Calls the operation at `name` through appRouter's own caller (tRPC's server-side call), its
 * middleware (auth, rate limit, errors) and its input and output schemas included: what REST does
 * for each request.
 */
export function callOperation(ctx: Context, name: string, input: unknown): Promise<unknown> {
  let target: unknown = callerOf(ctx);
  for (const key of name.split('.')) {
    target = (typeof target === 'object' || typeof target === 'function') && target ? Reflect.get(target, key) : null;
  }
  if (typeof target !== 'function') throw new Error(`no operation at ${name}`);
  return Promise.resolve(target(input));
}
