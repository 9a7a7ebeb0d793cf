import { listIntakePages } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { listIntakePagesSpec } from './list-intake-pages.types.ts';

export const listIntakePagesOperation = defineOperation(listIntakePagesSpec, (procedure) =>
  procedure.query(async ({ ctx }) => ({
    intake_pages: await listIntakePages(ctx.services.intakePageAdmin, ctx.account),
  })),
);
