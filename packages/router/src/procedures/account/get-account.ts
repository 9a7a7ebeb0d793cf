import { getAccount } from '@convo/domain';
import { operation } from '../../operation.ts';
import { authedProcedure } from '../../trpc.ts';
import { getAccountSpec, ZAccount } from './get-account.types.ts';

export const getAccountProcedure = authedProcedure
  .meta(getAccountSpec.meta)
  .input(getAccountSpec.input.prefault({}))
  .output(ZAccount)
  .query(({ ctx }) => getAccount(ctx.account));

export const getAccountOperation = operation(getAccountSpec, getAccountProcedure);
