import { createConversation } from '@convo/domain';
import { answer } from '../../answer.ts';
import { defineOperation } from '../../operation.ts';
import { createConversationSpec } from './create-conversation.types.ts';

export const createConversationOperation = defineOperation(createConversationSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) => {
    const { view, replayed } = await createConversation(
      ctx.services,
      ctx.account,
      {
        title: input.title,
        slug: input.slug,
        anyoneCanPost: input.anyone_can_post,
        allowAnonymousMessages: input.allow_anonymous_messages,
        allowSearchEngines: input.allow_search_engines,
        primaryIntakePage: input.primary_intake_page,
        intakePageId: input.intake_page_id,
      },
      { idempotencyKey: ctx.idempotencyKey ?? undefined },
    );
    return answer(view, { idempotentReplay: replayed });
  }),
);
