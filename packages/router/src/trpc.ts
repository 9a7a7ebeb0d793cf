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

/**
 * An error a call ended with, as its row of the error table: domain errors, a database that cannot
 * serve, input that breaks its schema (tRPC's BAD_REQUEST with zod's error). Null: none of those,
 * the error stays as it is. The procedures' middleware and REST's direct call (operation.ts) both
 * map through here.
 */
export function tableError(cause: unknown, code: TRPCError['code'], services: Context['services']): ApiError | null {
  if (cause instanceof DomainError) return new ApiError(cause.code, cause.message);
  if (services.isUnavailable(cause)) return new ApiError('unavailable');
  if (cause instanceof z.ZodError && code === 'BAD_REQUEST') {
    return new ApiError('invalid_input', describeIssues(cause.issues));
  }
  return null;
}

/** Domain errors and input that breaks its schema become rows of the error table, for REST and tRPC alike. */
const mapErrors = t.middleware(async ({ ctx, next }) => {
  const result = await next();
  if (!result.ok) {
    const mapped = tableError(result.error.cause, result.error.code, ctx.services);
    if (mapped) throw mapped;
  }
  return result;
});

export const publicProcedure = t.procedure.use(mapErrors);

/**
 * An operation's answer held to its declared shape at run time, where the services ask for it
 * (`checkAnswers`: development and tests; see docs/operating.md). A mismatch is a fault of ours,
 * never the client's: a 500 whose cause the log shows. Null when it holds, or is not checked.
 */
export function answerMismatch(schema: z.ZodType, data: unknown, services: Context['services']): TRPCError | null {
  if (!services.checkAnswers) return null;
  const checked = schema.safeParse(data instanceof Answer ? data.body : data);
  if (checked.success) return null;
  return new TRPCError({
    code: 'INTERNAL_SERVER_ERROR',
    cause: new Error(`the answer does not match its schema: ${describeIssues(checked.error.issues)}`),
  });
}

export const checkAnswer = (schema: z.ZodType) =>
  t.middleware(async ({ ctx, next }) => {
    const result = await next();
    const mismatch = result.ok ? answerMismatch(schema, result.data, ctx.services) : null;
    if (mismatch) throw mismatch;
    return result;
  });

/** What an operation's resolver knows beyond the request's context: the token's account. */
export interface Authorized {
  account: AccountContext;
  changeMark: string;
}

/**
 * Every operation needs a token; it fixes the one account all reads and writes are scoped to.
 * Every call counts against the quota, each call of a batch too. The procedures' middleware and
 * REST's direct call (operation.ts) both authorize here.
 */
export async function authorize(ctx: Context): Promise<Authorized> {
  const found = await ctx.authenticate();
  if (!found) throw new ApiError('unauthorized');
  const quota = await ctx.services.rateLimit(found.tokenId, found.account.id, found.rateLimit);
  if (quota) {
    ctx.auth.rateLimit = quota;
    if (!quota.allowed) throw new ApiError('rate_limited');
  }
  await ctx.services.touchToken(found.tokenId);
  ctx.auth.accountId = found.account.id;
  return { account: found.account, changeMark: found.changeMark };
}

export const authedProcedure = publicProcedure.use(async ({ ctx, next }) => next({ ctx: await authorize(ctx) }));
