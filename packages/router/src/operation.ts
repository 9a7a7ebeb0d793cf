import type { AnyProcedure, inferProcedureOutput } from '@trpc/server';
import type { z } from 'zod';
import type { Context } from './context.ts';
import type { ErrorCode } from './errors.ts';
import { authedProcedure, checkAnswer, createCallerFactory, type Meta, publicProcedure, router } from './trpc.ts';

/*
 * What an operation is, in one place: each procedure's .types.ts declares it, and everything else
 * is derived from that declaration: the REST route (apps/api/src/rest), the OpenAPI document
 * (apps/api/src/openapi.ts), the metrics label. CONTRIBUTING.md has the recipe.
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
  '415': { description: 'The body is neither JSON nor form-encoded', codes: ['unsupported_media_type'] },
} as const satisfies Record<string, OperationError>;

export interface OperationSpec {
  /** The tRPC procedure's path, e.g. `conversations.get`. */
  name: string;
  /** What /metrics counts its REST requests under (tRPC calls: `trpc:<name>`). */
  label: string;
  /** trpc-to-openapi's meta (method, path, summary, tags), and the status a success answers with. */
  meta: Meta & { openapi: NonNullable<Meta['openapi']> };
  /** The procedure's input schema: the REST adapter reads query and form fields by its members' kinds. */
  input: z.ZodObject;
  /**
   * The success answer's shape on the wire: the OpenAPI document's schema, and what the answer is
   * held to (by the compiler always, at run time where `checkAnswers` is on; see trpc.ts).
   */
  output: z.ZodType;
  /**
   * Its REST answers carry a strong ETag, and a request whose If-None-Match matches is answered
   * 304 without running it (reads only: the tag follows the account's change mark).
   */
  conditional?: true;
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

export interface Operation extends OperationSpec {
  /** Calls the procedure, its middleware (auth, rate limit, errors) and input and output parsing included. */
  call(ctx: Context, input: unknown): Promise<unknown>;
}

/** Where each operation's procedure starts: a token's account, its meta, its answer checked against `output`. */
export const procedureOf = (spec: OperationSpec) => authedProcedure.meta(spec.meta).use(checkAnswer(spec.output));

/**
 * An operation: its declaration, and a caller of its own procedure (tRPC's documented caller API).
 * It compiles only when what the procedure returns is the declared output.
 */
export function operation<S extends OperationSpec, P extends AnyProcedure>(
  spec: S,
  procedure: P,
  ..._answers: inferProcedureOutput<P> extends z.input<S['output']> ? [] : [never]
): Operation {
  const run: AnyProcedure = procedure;
  const createCaller = createCallerFactory(router({ run }));
  return { ...spec, call: (ctx, input) => createCaller(ctx).run(input) };
}

/** True when every member of an input is optional: a caller may then send none at all (read as `{}`). */
export const mayBeOmitted = (input: z.ZodObject): boolean => input.safeParse({}).success;

const notServed = (): never => {
  throw new Error('a declaration for the OpenAPI generator; the operation itself serves requests');
};

/**
 * The operations as trpc-to-openapi's generator reads them: each declaration's meta, input and
 * output, and nothing else (it is never called). The served procedures do not name their output to
 * tRPC, which would parse every answer (see `checkAnswer`), so the generator reads it from here.
 */
export function declaredRouter(operations: readonly Operation[]) {
  return router(
    Object.fromEntries(
      operations.map(({ name, meta, input, output }) => {
        // As the procedures do (`spec.input.prefault({})`): an all-optional input may be left out.
        const accepted: z.ZodType = mayBeOmitted(input) ? input.prefault({}) : input;
        const declared = publicProcedure.meta(meta).input(accepted).output(output);
        return [name, meta.openapi.method === 'GET' ? declared.query(notServed) : declared.mutation(notServed)];
      }),
    ),
  );
}
