import { FIRST_PAGE, listConversations } from '@convo/domain';
import { operation, procedureOf } from '../../operation.ts';
import { listConversationsSpec } from './list-conversations.types.ts';

export const listConversationsProcedure = procedureOf(listConversationsSpec)
  .input(listConversationsSpec.input.prefault({}))
  .query(async ({ ctx, input }) => {
    const { account, changeMark } = ctx;
    // The same page at the same change mark is the same answer: read once per change (page-cache.ts).
    const at = {
      accountId: account.id,
      changeMark,
      host: account.host,
      key: account.key,
      page: input.page ?? FIRST_PAGE,
    };
    const { view, position } = await ctx.services.pages.remember(at, () =>
      listConversations(ctx.services, account, input),
    );
    ctx.notes.pagePosition = position;
    return view;
  });

export const listConversationsOperation = operation(listConversationsSpec, listConversationsProcedure);
