import { createMessageTemplate } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { createMessageTemplateSpec } from './create-message-template.types.ts';

export const createMessageTemplateOperation = defineOperation(createMessageTemplateSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => {
    const { recording_kind, ...fields } = input;
    return createMessageTemplate(ctx.services, ctx.account, fields, 'account', {
      file: ctx.recording.take(),
      kind: recording_kind,
    });
  }),
);
