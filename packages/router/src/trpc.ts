import { type AccountContext, DomainError } from '@convo/domain';
import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import { Answer } from './answer.ts';
import type { Context } from './context.ts';
import { codeForTrpc, ERRORS, type ErrorCode, publicMessage, trpcErrorShape } from './errors.ts';

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
    // Our errors carry their row of the table; the library's own (an unknown procedure, a body
    // that is not JSON) get their row's message, never the library's text.
    errorFormatter({ shape, error }) {
      return error instanceof ApiError
        ? trpcErrorShape(error.appCode, error.message, shape.data.path)
        : trpcErrorShape(codeForTrpc(error.code), 'the request cannot be served', shape.data.path);
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * What an input's issues are said as: each member's path and zod's message, but a required member
 * left out as the original service says it ("Required parameter conversation_id is missing").
 */
const describeIssues = (issues: z.core.$ZodIssue[]): string =>
  issues
    .slice(0, 5)
    .map((i) => {
      const path = i.path.length > 0 ? i.path.join('.') : 'input';
      const missing = i.code === 'invalid_type' && i.path.length > 0 && /received undefined$/.test(i.message);
      return missing ? `Required parameter ${path} is missing` : `${path}: ${i.message}`;
    })
    .join('; ');

/** Domain errors and input that breaks its schema become rows of the error table, for REST and tRPC alike. */
const mapErrors = t.middleware(async ({ ctx, next }) => {
  const result = await next();
  if (!result.ok) {
    const { cause, code } = result.error;
    if (cause instanceof DomainError) throw new ApiError(cause.code, cause.message);
    if (ctx.services.isUnavailable(cause)) throw new ApiError('unavailable');
    if (cause instanceof z.ZodError && code === 'BAD_REQUEST') {
      throw new ApiError('invalid_input', describeIssues(cause.issues));
    }
  }
  return result;
});

export const publicProcedure = t.procedure.use(mapErrors);

/**
 * An operation's answer held to its declared shape at run time, where the services ask for it
 * (`checkAnswers`: development and tests; see docs/operating.md). A mismatch is a fault of ours,
 * never the client's: a 500 whose cause the log shows.
 */
export const checkAnswer = (schema: z.ZodType) =>
  t.middleware(async ({ ctx, next }) => {
    const result = await next();
    if (result.ok && ctx.services.checkAnswers) {
      const checked = schema.safeParse(result.data instanceof Answer ? result.data.body : result.data);
      if (!checked.success) {
        throw new TRPCError({
          code: 'INTERNAL_SERVER_ERROR',
          cause: new Error(`the answer does not match its schema: ${describeIssues(checked.error.issues)}`),
        });
      }
    }
    return result;
  });

/** Every operation needs a token; it fixes the one account all reads and writes are scoped to. */
export const authedProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const found = await ctx.authenticate();
  if (!found) throw new ApiError('unauthorized');
  // Every call counts against the quota, each call of a batch too.
  const quota = await ctx.services.rateLimit(found.tokenId, found.account.id, found.rateLimit);
  if (quota) {
    ctx.auth.rateLimit = quota;
    if (!quota.allowed) throw new ApiError('rate_limited');
  }
  await ctx.services.touchToken(found.tokenId);
  const account: AccountContext = found.account;
  ctx.auth.accountId = account.id;
  return next({ ctx: { ...ctx, account, changeMark: found.changeMark } });
});
