import { AccountStore, databaseUnavailable, hashToken } from '@convo/db';
import { type AccountContext, DomainError, tokenFromAuthorization } from '@convo/domain';
import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { z } from 'zod';
import type { Context } from './context.ts';
import { codeForTrpc, ERRORS, type ErrorCode, publicMessage } from './errors.ts';

/** Our procedure meta: trpc-to-openapi's, plus the status a success answers with. */
export type Meta = OpenApiMeta<{ successStatus?: number }>;

/** A tRPC error that knows its row in the error table. */
export class ApiError extends TRPCError {
  readonly appCode: ErrorCode;

  constructor(code: ErrorCode, detail = '') {
    super({ code: ERRORS[code].trpc, message: publicMessage(code, detail) });
    this.appCode = code;
  }
}

const t = initTRPC
  .meta<Meta>()
  .context<Context>()
  .create({
    // Never a stack trace or an internal message in a response, whatever NODE_ENV says.
    isDev: false,
    errorFormatter({ shape, error }) {
      const appCode = error instanceof ApiError ? error.appCode : codeForTrpc(error.code);
      return {
        ...shape,
        message: appCode === 'internal' ? publicMessage('internal', '') : shape.message,
        data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, appCode },
      };
    },
  });

export const router = t.router;

const describeIssues = (issues: z.core.$ZodIssue[]): string =>
  issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'input'}: ${i.message}`)
    .join('; ');

/** Domain errors and schema violations become rows of the error table, for REST and tRPC alike. */
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause;
    if (cause instanceof DomainError) throw new ApiError(cause.code, cause.message);
    if (databaseUnavailable(cause)) throw new ApiError('unavailable');
    if (cause instanceof Error && cause.name === 'ZodError' && 'issues' in cause) {
      throw new ApiError('invalid_input', describeIssues(cause.issues as z.core.$ZodIssue[]));
    }
  }
  return result;
});

export const publicProcedure = t.procedure.use(mapErrors);

/** Every operation needs a token; it fixes the one account all reads and writes are scoped to. */
export const authedProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const token = tokenFromAuthorization(ctx.authorization);
  if (!token) throw new ApiError('unauthorized');
  const found = await new AccountStore(ctx.em).findByTokenHash(hashToken(token));
  if (!found) throw new ApiError('unauthorized');
  const quota = await ctx.services.rateLimit(found.tokenId, found.account.id, found.rateLimit);
  if (quota) {
    ctx.notes.rateLimit = quota;
    if (!quota.allowed) throw new ApiError('rate_limited');
  }
  await ctx.services.touchToken(found.tokenId);
  const account: AccountContext = found.account;
  ctx.notes.accountId = account.id;
  return next({ ctx: { ...ctx, account } });
});
