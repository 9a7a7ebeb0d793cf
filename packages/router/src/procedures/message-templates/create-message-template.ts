import { createMessageTemplate } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { createMessageTemplateSpec } from './create-message-template.types.ts';

export const createMessageTemplateOperation = defineOperation(createMessageTemplateSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => createMessageTemplate(ctx.services, ctx.account, input, 'account')),
);
