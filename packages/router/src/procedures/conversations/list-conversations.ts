import { listConversations } from '@convo/domain';
import { operation, procedureOf } from '../../operation.ts';
import { listConversationsSpec } from './list-conversations.types.ts';

export const listConversationsProcedure = procedureOf(listConversationsSpec)
  .input(listConversationsSpec.input.prefault({}))
  .query(async ({ ctx, input }) => {
    const { view, position } = await listConversations(ctx.services, ctx.account, input);
    ctx.notes.pagePosition = position;
    return view;
  });

export const listConversationsOperation = operation(listConversationsSpec, listConversationsProcedure);
