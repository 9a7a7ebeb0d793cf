import { deleteMessageTemplate } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { deleteMessageTemplateSpec } from './delete-message-template.types.ts';

export const deleteMessageTemplateOperation = defineOperation(deleteMessageTemplateSpec, (procedure) =>
  procedure.mutation(async ({ ctx, input }) => {
    await deleteMessageTemplate(ctx.services, ctx.account, input.id, 'account');
    return { id: input.id, deleted: true as const };
  }),
);
