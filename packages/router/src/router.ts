import { type Operation, operationOf } from './operation.ts';
import { getAccountOperation } from './procedures/account/get-account.ts';
import { addConversationMemberOperation } from './procedures/conversations/add-conversation-member.ts';
import { createConversationOperation } from './procedures/conversations/create-conversation.ts';
import { deleteConversationOperation } from './procedures/conversations/delete-conversation.ts';
import { getConversationOperation } from './procedures/conversations/get-conversation.ts';
import { getConversationsOperation } from './procedures/conversations/get-conversations.ts';
import { removeConversationMemberOperation } from './procedures/conversations/remove-conversation-member.ts';
import { updateConversationOperation } from './procedures/conversations/update-conversation.ts';
import { changeIntakePageOperation } from './procedures/intake-pages/change-intake-page.ts';
import { createIntakePageOperation } from './procedures/intake-pages/create-intake-page.ts';
import { listIntakePagesOperation } from './procedures/intake-pages/list-intake-pages.ts';
import { createMessageTemplateOperation } from './procedures/message-templates/create-message-template.ts';
import { deleteMessageTemplateOperation } from './procedures/message-templates/delete-message-template.ts';
import { listMessageTemplatesOperation } from './procedures/message-templates/list-message-templates.ts';
import { updateMessageTemplateOperation } from './procedures/message-templates/update-message-template.ts';
import { addReactionOperation } from './procedures/messages/add-reaction.ts';
import { createMessageOperation } from './procedures/messages/create-message.ts';
import { getMessageViewsOperation } from './procedures/messages/get-message-views.ts';
import { getMessagesOperation } from './procedures/messages/get-messages.ts';
import { removeReactionOperation } from './procedures/messages/remove-reaction.ts';
import { getTeamOperation } from './procedures/team/get-team.ts';
import { updateTeamMemberOperation } from './procedures/team/update-team-member.ts';
import { createWebhookOperation } from './procedures/webhooks/create-webhook.ts';
import { deleteWebhookOperation } from './procedures/webhooks/delete-webhook.ts';
import { listWebhooksOperation } from './procedures/webhooks/list-webhooks.ts';
import { changeWorkflowOperation } from './procedures/workflows/change-workflow.ts';
import { createWorkflowOperation } from './procedures/workflows/create-workflow.ts';
import { listWorkflowsOperation } from './procedures/workflows/list-workflows.ts';
import { router } from './trpc.ts';

/**
 * Every operation, by area and by its one name (`getConversations`): the one place an operation
 * is registered. Its tRPC path is `<area>.<name>`; its REST and /metrics label (`get_conversations`),
 * its OpenAPI operationId, its files (`get-conversations.ts`) and its use case (`getConversations`)
 * are that name too (operationOf derives them; architecture.test.ts holds the files to it).
 */
const procedures = {
  conversations: {
    createConversation: createConversationOperation,
    getConversation: getConversationOperation,
    getConversations: getConversationsOperation,
    addConversationMember: addConversationMemberOperation,
    removeConversationMember: removeConversationMemberOperation,
    updateConversation: updateConversationOperation,
    deleteConversation: deleteConversationOperation,
  },
  account: { getAccount: getAccountOperation },
  webhooks: {
    createWebhook: createWebhookOperation,
    listWebhooks: listWebhooksOperation,
    deleteWebhook: deleteWebhookOperation,
  },
  workflows: {
    createWorkflow: createWorkflowOperation,
    listWorkflows: listWorkflowsOperation,
    changeWorkflow: changeWorkflowOperation,
  },
  intakePages: {
    createIntakePage: createIntakePageOperation,
    listIntakePages: listIntakePagesOperation,
    changeIntakePage: changeIntakePageOperation,
  },
  team: {
    getTeam: getTeamOperation,
    updateTeamMember: updateTeamMemberOperation,
  },
  messages: {
    getMessages: getMessagesOperation,
    createMessage: createMessageOperation,
    getMessageViews: getMessageViewsOperation,
    addReaction: addReactionOperation,
    removeReaction: removeReactionOperation,
  },
  messageTemplates: {
    listMessageTemplates: listMessageTemplatesOperation,
    createMessageTemplate: createMessageTemplateOperation,
    updateMessageTemplate: updateMessageTemplateOperation,
    deleteMessageTemplate: deleteMessageTemplateOperation,
  },
};

/** The typed tRPC surface: what `@convo/client` and any TypeScript frontend call. */
export const appRouter = router(procedures);

export type AppRouter = typeof appRouter;

/** Every operation with its declaration, names and direct call: the REST routes, the OpenAPI document and metrics come from these. */
export const operations: readonly Operation[] = Object.entries(procedures).flatMap(([area, group]) =>
  Object.entries(group).map(([name, procedure]) => operationOf(area, name, procedure)),
);

/**
 * The paths of the first release's procedures, before each was named once (`conversations.list`
 * is `conversations.getConversations`): the tRPC endpoint still answers them, as the same
 * procedures, so a client written against them keeps working. Deprecated (docs/api.md).
 */
export const FORMER_TRPC_PATHS: Readonly<Record<string, string>> = {
  'conversations.create': 'conversations.createConversation',
  'conversations.get': 'conversations.getConversation',
  'conversations.list': 'conversations.getConversations',
  'conversations.addMember': 'conversations.addConversationMember',
  'conversations.removeMember': 'conversations.removeConversationMember',
  'account.get': 'account.getAccount',
  'webhooks.create': 'webhooks.createWebhook',
  'webhooks.list': 'webhooks.listWebhooks',
  'webhooks.delete': 'webhooks.deleteWebhook',
  'workflows.create': 'workflows.createWorkflow',
  'workflows.list': 'workflows.listWorkflows',
  'workflows.change': 'workflows.changeWorkflow',
  'intakePages.create': 'intakePages.createIntakePage',
  'intakePages.list': 'intakePages.listIntakePages',
  'intakePages.change': 'intakePages.changeIntakePage',
};
