import { MikroConversationStore } from '@convo/db';
import { listConversations } from '@convo/domain';
import { authedProcedure } from '../../trpc.ts';
import { listConversationsMeta, ZConversationList, ZListConversationsInput } from './list-conversations.types.ts';

export const listConversationsProcedure = authedProcedure
  .meta(listConversationsMeta)
  .input(ZListConversationsInput)
  .output(ZConversationList)
  .query(async ({ ctx, input }) => {
    const { view, position } = await listConversations(
      { conversations: new MikroConversationStore(ctx.em) },
      ctx.account,
      input,
    );
    ctx.notes.pagePosition = position;
    return view;
  });
