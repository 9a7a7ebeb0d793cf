import { listMessageTemplates } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { listMessageTemplatesSpec } from './list-message-templates.types.ts';

export const listMessageTemplatesOperation = defineOperation(listMessageTemplatesSpec, (procedure) =>
  procedure.query(({ ctx }) => listMessageTemplates(ctx.services, ctx.account)),
);
