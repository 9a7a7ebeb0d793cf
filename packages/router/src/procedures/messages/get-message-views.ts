import { getMessageViews } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { getMessageViewsSpec } from './get-message-views.types.ts';

export const getMessageViewsOperation = defineOperation(getMessageViewsSpec, (procedure) =>
  procedure.query(({ ctx, input }) => getMessageViews(ctx.services, ctx.account, input)),
);
