import { updateConversation } from '@convo/domain';
import { viewOf } from '../../answer-json.ts';
import { defineOperation } from '../../operation.ts';
import { updateConversationSpec } from './update-conversation.types.ts';

export const updateConversationOperation = defineOperation(updateConversationSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) =>
    viewOf(
      await updateConversation(ctx.services, ctx.account, {
        conversationId: input.conversation_id,
        title: input.title,
        anyoneCanPost: input.anyone_can_post,
        allowAnonymousMessages: input.allow_anonymous_messages,
        allowSearchEngines: input.allow_search_engines,
        state: input.state,
        assigneeEmail: input.assignee_email,
        archived: input.archived,
        tags: input.tags,
      }),
    ),
  ),
);
