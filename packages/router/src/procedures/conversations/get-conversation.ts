import { MikroConversationStore } from '@convo/db';
import { getConversation } from '@convo/domain';
import { authedProcedure } from '../../trpc.ts';
import { ZConversation } from './conversation.types.ts';
import { getConversationMeta, ZGetConversationInput } from './get-conversation.types.ts';

export const getConversationProcedure = authedProcedure
  .meta(getConversationMeta)
  .input(ZGetConversationInput)
  .output(ZConversation)
  .query(({ ctx, input }) =>
    getConversation({ conversations: new MikroConversationStore(ctx.em) }, ctx.account, input),
  );
