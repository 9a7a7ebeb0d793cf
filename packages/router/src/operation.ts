import type { StandardSchemaV1 } from '@standard-schema/spec';
import { type AnyProcedure, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { Answer, noteHeaders } from './answer.ts';
import type { Context } from './context.ts';
import type { ErrorCode } from './errors.ts';
import {
  type Authorized,
  answerMismatch,
  authedProcedure,
  authorize,
  checkAnswer,
  type Meta,
  publicProcedure,
  router,
  tableError,
} from './trpc.ts';

/*
 * What an operation is, in one place: each procedure's .types.ts declares it and its .ts defines
 * it (`defineOperation`); everything else is derived from `appRouter`: the REST route
 * (apps/api/src/http/rest), the OpenAPI document (apps/api/src/http/openapi.ts), the metrics label.
 * CONTRIBUTING.md has the recipe.
 */

/** An error status an operation can answer, what it means there, and the codes behind it. */
export interface OperationError {
  description: string;
  codes: ErrorCode[];
}

/** What an operation that reads a request body can answer because of the body itself. */
export const BODY_ERRORS = {
  '400': {
    description: 'The body is not valid JSON, or the request is not valid HTTP',
    codes: ['malformed_body', 'bad_request'],
  },
  '408': {
    description: 'The body did not arrive whole in time; the connection is closed',
    codes: ['request_timeout'],
  },
  '413': {
    description: 'The body is over the size limit, or a form body has more than 100 fields',
    codes: ['body_too_large'],
  },
  '415': {
    description: 'The body is neither JSON nor form-encoded, or it is JSON sent with a form content type',
    codes: ['unsupported_media_type', 'json_sent_as_form'],
  },
} as const satisfies Record<string, OperationError>;

/**
 * What the OpenAPI document says of an operation that takes an Idempotency-Key: the header (its
 * `rule`, which each says in its own words) and the header a replayed answer carries.
 */
export const idempotencyDoc = (rule: string, example: string) => ({
  headers: { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } },
  parameters: [
    {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: rule,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
      example,
    },
  ],
});

export interface OperationSpec {
  /**
   * trpc-to-openapi's meta (method, path, summary, tags), and the status a success answers with;
   * not its operationId, which is the operation's name (router.ts). A new operation's path is the
   * spec's style: `/<resource>/<verb_noun>` (`/messages/get_messages`).
   */
  meta: Meta & { openapi: NonNullable<Meta['openapi']> & { operationId?: never } };
  /**
   * The procedure's input schema, an object: wrapped in `.prefault({})` when every member is
   * optional, so a caller may leave the input out. The REST adapter reads query and form fields by
   * its members' kinds.
   */
  input: z.ZodObject | z.ZodPrefault<z.ZodObject>;
  /**
   * The success answer's shape on the wire: the compiler holds the resolver's return type to it,
   * the run time where `checkAnswers` is on (development and tests), and the OpenAPI document
   * publishes it.
   */
  output: z.ZodType;
  /**
   * Its REST answers carry a strong ETag, and a request whose If-None-Match matches is answered
   * 304 without running it (reads only: the tag follows the account's change mark).
   */
  conditional?: true;
  /**
   * Its REST members may also be given as query parameters of a POST (the original service
   * documents create_message's so); a member the body gives wins over the query's.
   */
  queryToo?: true;
  /** The OpenAPI document's account of it, beyond what the generator says. */
  doc: {
    description: string;
    /** The success answer's example. */
    example: unknown;
    /**
     * Statuses beyond those every authenticated operation can answer (401, 429, 500, 503), each
     * with the codes it carries.
     */
    errors: Record<string, OperationError>;
    /** Headers of the success answer. */
    headers?: Record<string, unknown>;
    /** Header parameters. */
    parameters?: Record<string, unknown>[];
    /** Examples of the request body, by media type. */
    requestExamples?: Record<string, unknown>;
  };
}

/** An operation as the transports and the OpenAPI document see it: its declaration, its names, its direct call. */
export interface Operation extends OperationSpec {
  /** The procedure's path in `appRouter`: `<area>.<name>`, e.g. `conversations.getConversations`. */
  path: string;
  /** Its one name, e.g. `getConversations`: its OpenAPI operationId. */
  name: string;
  /** The name as the spec writes it, `get_conversations`: what /metrics counts its REST requests under. */
  label: string;
  /**
   * Calls the operation as its procedure would run: authorized (token, rate limit), its input
   * parsed by its schema, its answer checked where the services ask, errors as the table has
   * them; the same functions tRPC's middleware calls, without tRPC's caller (see `startOf`). What
   * REST does for each request. The answer comes back with its notes (answer.ts).
   */
  call(ctx: Context, input: unknown): Promise<Answer<unknown>>;
}

/** `getConversations` as the spec writes it: `get_conversations`. */
export const snakeName = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `getConversations` as a file is named: `get-conversations`. */
export const kebabName = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** An operation registered at `<area>.<name>` in appRouter, with the names and direct call it derives from there. */
export function operationOf(area: string, name: string, procedure: AnyProcedure & { spec: OperationSpec }): Operation {
  const direct = directCalls.get(procedure);
  if (!direct) throw new Error(`${area}.${name} was not made by defineOperation`);
  return {
    ...procedure.spec,
    path: `${area}.${name}`,
    name,
    label: snakeName(name),
    call: async (ctx, input) => {
      const answered = await direct(ctx, input);
      return answered instanceof Answer ? answered : new Answer(answered, {});
    },
  };
}

/**
 * Each operation's tRPC procedure, to the same steps called directly (`operationOf`): what REST
 * runs. Kept beside the procedure rather than on it, so that the AppRouter type clients import
 * stays tRPC's own.
 */
const directCalls = new WeakMap<AnyProcedure, (ctx: Context, input: unknown) => Promise<unknown>>();

/** The members of an operation's input object, seen through `.prefault({})`. */
export const inputObject = (input: OperationSpec['input']): z.ZodObject =>
  input instanceof z.ZodPrefault ? input.unwrap() : input;

/** tRPC's input, which its types allow to be absent where no parser is set (every operation sets one). */
function given<T>(input: T | undefined): T {
  if (input === undefined) throw new Error('the procedure ran without its input');
  return input;
}

/**
 * Where every operation's procedure starts: a token's account, the spec's meta and input, and the
 * answer check where the services ask for it (`checkAnswer`). Its `query` and `mutation` take a
 * resolver typed to answer the output schema's shape, so one that answers anything else does not
 * compile, its error naming the field; nothing is parsed at run time (tRPC's `.output()` parses
 * every answer: with the zod schema into a copy, measured to take a kept page of conversations
 * from 6.4 – 8.5x the baseline to 2.6x, bench/results/2026-11-24.md; even an identity parse is a
 * middleware more per request, measured at about 5 % of a kept page's rate).
 *
 * REST calls the same steps directly, in the same order (authorize, parse the input, resolve,
 * check the answer, map errors to the table), each step the one function the middleware calls:
 * tRPC's server-side caller (a proxy, and a copy of its options and context for each of five
 * middlewares) cost a lookup 251 µs of CPU in process against 187 µs called directly
 * (bench/results/2026-12-05-direct-calls.md).
 */
const startOf = <I extends z.ZodType, O extends z.ZodType>(spec: OperationSpec & { input: I; output: O }) => {
  const schema: I = spec.input;
  // Given to tRPC as the Standard Schema it is, so tRPC's input types are the schema's own input
  // and output, the ones the direct call's parse gives.
  const standard: StandardSchemaV1<z.input<I>, z.output<I>> = schema;
  const procedure = authedProcedure.meta(spec.meta).input(standard).use(checkAnswer(spec.output));
  type Options = { ctx: Context & Authorized; input: z.output<I> };
  type Answered = z.input<O> | Answer<z.input<O>>;
  type Resolver = (options: Options) => Answered | Promise<Answered>;
  /** tRPC's answer: the body, the notes as its response's headers. */
  const served = (resolve: Resolver) => async (options: Parameters<Parameters<typeof procedure.query>[0]>[0]) => {
    const answered = await resolve({ ctx: options.ctx, input: given<z.output<I>>(options.input) });
    if (!(answered instanceof Answer)) return answered;
    for (const [name, value] of noteHeaders(answered.notes)) options.ctx.resHeaders?.set(name, value);
    return answered.body;
  };
  /** The procedure's steps without tRPC's caller: its errors as the middleware would leave them. */
  const direct = (resolve: Resolver) => async (ctx: Context, raw: unknown) => {
    try {
      const authorized = await authorize(ctx);
      const parsed = await schema.safeParseAsync(raw);
      if (!parsed.success) throw tableError(parsed.error, 'BAD_REQUEST', ctx.services);
      const answered = await resolve({ ctx: { ...ctx, ...authorized }, input: parsed.data });
      const mismatch = answerMismatch(spec.output, answered, ctx.services);
      if (mismatch) throw mismatch;
      return answered;
    } catch (e) {
      // As tRPC leaves a thrown error for the middleware: itself when a TRPCError (ours are), else
      // wrapped as an internal one; then mapped as the middleware maps it.
      const error = e instanceof TRPCError ? e : new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: e });
      throw tableError(error.cause, error.code, ctx.services) ?? error;
    }
  };
  const withDirect = <P extends AnyProcedure>(served: P, resolve: Resolver): P => {
    directCalls.set(served, direct(resolve));
    return served;
  };
  return {
    query: (resolve: Resolver) => withDirect(procedure.query(served(resolve)), resolve),
    mutation: (resolve: Resolver) => withDirect(procedure.mutation(served(resolve)), resolve),
  };
};

/**
 * An operation, declared once: its spec, and a resolver given the procedure the spec starts
 * (`(procedure) => procedure.query(…)` or `.mutation(…)`). What comes back is the tRPC procedure,
 * carrying its spec, for `appRouter`; the REST route, the OpenAPI document and the metrics label
 * are derived from it there (router.ts).
 */
export function defineOperation<
  I extends OperationSpec['input'] & z.ZodType,
  O extends z.ZodType,
  S extends OperationSpec & { input: I; output: O },
  P extends AnyProcedure,
>(spec: S & { input: I; output: O }, resolve: (procedure: ReturnType<typeof startOf<I, O>>) => P): P & { spec: S } {
  return Object.assign(resolve(startOf<I, O>(spec)), { spec });
}

const notServed = (): never => {
  throw new Error('the OpenAPI generator reads this procedure; the operation itself serves requests');
};

/**
 * The operations as trpc-to-openapi's generator reads them, derived from appRouter's operations:
 * each one's meta and input as served, and its output schema, which the served procedure checks
 * itself rather than declare to tRPC (see `startOf`). Never called.
 */
export function openApiRouter(operations: readonly Operation[]) {
  return router(
    Object.fromEntries(
      operations.map(({ path, name, meta, input, output }) => {
        const accepted: z.ZodType = input;
        const declared = publicProcedure
          .meta({ ...meta, openapi: { ...meta.openapi, operationId: name } })
          .input(accepted)
          .output(output);
        return [path, meta.openapi.method === 'GET' ? declared.query(notServed) : declared.mutation(notServed)];
      }),
    ),
  );
}
