import { getMessages } from '@convo/domain';
import { answer } from '../../answer.ts';
import { listViewOf } from '../../answer-json.ts';
import { defineOperation } from '../../operation.ts';
import { getMessagesSpec } from './get-messages.types.ts';

export const getMessagesOperation = defineOperation(getMessagesSpec, (procedure) =>
  procedure.query(async ({ ctx, input }) => {
    const { page, position } = await getMessages(ctx.services, ctx.account, {
      conversationSlug: input.conversation_slug,
      page: input.page,
      createdAfter: input.created_after,
      createdBefore: input.created_before,
    });
    return answer(listViewOf(page, 'messages'), { pagePosition: position });
  }),
);
