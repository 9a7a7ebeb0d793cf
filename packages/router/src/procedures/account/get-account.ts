import { getAccount } from '@convo/domain';
import { operation, procedureOf } from '../../operation.ts';
import { getAccountSpec } from './get-account.types.ts';

export const getAccountProcedure = procedureOf(getAccountSpec)
  .input(getAccountSpec.input.prefault({}))
  .query(({ ctx }) => getAccount(ctx.account));

export const getAccountOperation = operation(getAccountSpec, getAccountProcedure);
