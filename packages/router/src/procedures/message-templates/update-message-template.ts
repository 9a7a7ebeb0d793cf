import { updateMessageTemplate } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { updateMessageTemplateSpec } from './update-message-template.types.ts';

export const updateMessageTemplateOperation = defineOperation(updateMessageTemplateSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => {
    const { id, recording_kind, ...change } = input;
    return updateMessageTemplate(ctx.services, ctx.account, id, change, 'account', {
      file: ctx.recording.take(),
      kind: recording_kind,
    });
  }),
);
