import { listConversations } from '@convo/domain';
import { operation } from '../../operation.ts';
import { authedProcedure } from '../../trpc.ts';
import { listConversationsSpec, ZConversationList } from './list-conversations.types.ts';

export const listConversationsProcedure = authedProcedure
  .meta(listConversationsSpec.meta)
  .input(listConversationsSpec.input.prefault({}))
  .output(ZConversationList)
  .query(async ({ ctx, input }) => {
    const { view, position } = await listConversations(ctx.services, ctx.account, input);
    ctx.notes.pagePosition = position;
    return view;
  });

export const listConversationsOperation = operation(listConversationsSpec, listConversationsProcedure);
