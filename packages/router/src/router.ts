import { createConversationProcedure } from './procedures/conversations/create-conversation.ts';
import { getConversationProcedure } from './procedures/conversations/get-conversation.ts';
import { listConversationsProcedure } from './procedures/conversations/list-conversations.ts';
import { router } from './trpc.ts';

export const appRouter = router({
  conversations: router({
    create: createConversationProcedure,
    get: getConversationProcedure,
    list: listConversationsProcedure,
  }),
});

export type AppRouter = typeof appRouter;
