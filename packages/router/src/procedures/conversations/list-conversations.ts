import { FIRST_PAGE, listConversations } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { listConversationsSpec } from './list-conversations.types.ts';

export const listConversationsOperation = defineOperation(listConversationsSpec, (procedure) =>
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
    const { view, position } = await ctx.services.conversationLists.remember(at, () =>
      listConversations(ctx.services, account, input),
    );
    ctx.forResponse.pagePosition = position;
    return view;
  }),
);
