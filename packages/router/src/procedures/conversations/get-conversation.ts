import { getConversation } from '@convo/domain';
import { answer } from '../../answer.ts';
import { viewOf } from '../../answer-json.ts';
import { defineOperation } from '../../operation.ts';
import { getConversationSpec } from './get-conversation.types.ts';

export const getConversationOperation = defineOperation(getConversationSpec, (procedure) =>
  procedure.query(async ({ ctx, input }) => {
    const { view, matched } = await getConversation(ctx.services, ctx.account, input);
    return answer(viewOf(view), { lookupMatch: matched });
  }),
);
