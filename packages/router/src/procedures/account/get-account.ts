import { getAccount } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { getAccountSpec } from './get-account.types.ts';

export const getAccountOperation = defineOperation(getAccountSpec, (procedure) =>
  procedure.query(({ ctx }) => getAccount(ctx.account)),
);
