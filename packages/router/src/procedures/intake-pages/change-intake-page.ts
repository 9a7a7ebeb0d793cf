import { changeIntakePage } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { changeIntakePageSpec } from './change-intake-page.types.ts';

export const changeIntakePageOperation = defineOperation(changeIntakePageSpec, (procedure) =>
  procedure.mutation(({ ctx, input }) => {
    const { id, ...change } = input;
    return changeIntakePage(ctx.services.intakePageAdmin, ctx.account, id, change, 'account');
  }),
);
