import { createIntakePage } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { createIntakePageSpec } from './create-intake-page.types.ts';

export const createIntakePageOperation = defineOperation(createIntakePageSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => createIntakePage(ctx.services.intakePageAdmin, ctx.account, input, 'account')),
);
