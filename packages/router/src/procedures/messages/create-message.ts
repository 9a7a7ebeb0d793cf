import { createMessage } from '@convo/domain';
import { answer } from '../../answer.ts';
import { viewOf } from '../../answer-json.ts';
import { defineOperation } from '../../operation.ts';
import { createMessageSpec } from './create-message.types.ts';

export const createMessageOperation = defineOperation(createMessageSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) => {
    const { view, replayed } = await createMessage(
      ctx.services,
      ctx.account,
      {
        conversationId: input.conversation_id,
        text: input.text,
        userEmail: input.user_email,
        messageTemplateId: input.message_template_id,
        internal: input.internal,
        parentMessageId: input.parent_message_id,
        atSeconds: input.at_seconds,
        recording: ctx.recording.take(),
        recordingKind: input.recording_kind,
      },
      { idempotencyKey: ctx.idempotencyKey ?? undefined },
    );
    return answer(viewOf(view), { idempotentReplay: replayed });
  }),
);
