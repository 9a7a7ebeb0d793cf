import { FIRST_PAGE, getConversations } from '@convo/domain';
import { answer } from '../../answer.ts';
import { listViewOf } from '../../answer-json.ts';
import { defineOperation } from '../../operation.ts';
import { getConversationsSpec } from './get-conversations.types.ts';

export const getConversationsOperation = defineOperation(getConversationsSpec, (procedure) =>
  procedure.query(async ({ ctx, input }) => {
    const { account, changeMark } = ctx;
    // The same page at the same change mark is the same answer: read once per change (conversation-list-cache.ts).
    const at = {
      accountId: account.id,
      changeMark,
      host: account.host,
      key: account.key,
      page: input.page ?? FIRST_PAGE,
    };
    const { view, position } = await ctx.services.conversationLists.remember(at, async () => {
      const { page, position } = await getConversations(ctx.services, account, input);
      return { view: listViewOf(page, 'conversations'), position };
    });
    return answer(view, { pagePosition: position });
  }),
);
