import { MikroConversationStore } from '@convo/db';
import { listConversations } from '@convo/domain';
import { authedProcedure } from '../../trpc.ts';
import { listConversationsMeta, ZConversationList, ZListConversationsInput } from './list-conversations.types.ts';

export const listConversationsProcedure = authedProcedure
  .meta(listConversationsMeta)
  .input(ZListConversationsInput)
  .output(ZConversationList)
  .query(({ ctx, input }) =>
    listConversations({ conversations: new MikroConversationStore(ctx.em) }, ctx.account, input),
  );
