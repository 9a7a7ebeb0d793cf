import type { AnyProcedure, inferProcedureOutput } from '@trpc/server';
import { z } from 'zod';
import type { ErrorCode } from './errors.ts';
import { authedProcedure, checkAnswer, type Meta, publicProcedure, router } from './trpc.ts';

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

export interface OperationSpec {
  /** What /metrics counts its REST requests under (tRPC calls: `trpc:<name>`). */
  label: string;
  /** trpc-to-openapi's meta (method, path, summary, tags), and the status a success answers with. */
  meta: Meta & { openapi: NonNullable<Meta['openapi']> };
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

/** An operation as the transports and the OpenAPI document see it: its declaration and its procedure's path. */
export interface Operation extends OperationSpec {
  /** The procedure's path in `appRouter`, e.g. `conversations.get`. */
  name: string;
}

/** The members of an operation's input object, seen through `.prefault({})`. */
export const inputObject = (input: OperationSpec['input']): z.ZodObject =>
  input instanceof z.ZodPrefault ? input.unwrap() : input;

/**
 * Where every operation's procedure starts: a token's account, the spec's meta and input, and its
 * answer checked against the output schema where the services ask for it (`checkAnswer`). Not
 * tRPC's `.output()`, which parses every answer into a copy: measured, that took a kept page of
 * conversations from 6.4 – 8.5x the baseline to 2.6x (bench/results/2026-11-24.md).
 */
const startOf = <I extends OperationSpec['input']>(spec: OperationSpec & { input: I }) =>
  authedProcedure.meta(spec.meta).input(spec.input).use(checkAnswer(spec.output));

/**
 * An operation, declared once: its spec, and a resolver given the procedure the spec starts
 * (`(procedure) => procedure.query(…)` or `.mutation(…)`). What comes back is the tRPC procedure,
 * carrying its spec, for `appRouter`; the REST route, the OpenAPI document and the metrics label
 * are derived from it there (router.ts). It compiles only when what the resolver returns is the
 * declared output.
 */
export function defineOperation<
  I extends OperationSpec['input'],
  S extends OperationSpec & { input: I },
  P extends AnyProcedure,
>(
  spec: S & { input: I },
  resolve: (procedure: ReturnType<typeof startOf<I>>) => P,
  ..._answers: inferProcedureOutput<P> extends z.input<S['output']> ? [] : [never]
): P & { spec: S } {
  return Object.assign(resolve(startOf<I>(spec)), { spec });
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
      operations.map(({ name, meta, input, output }) => {
        const accepted: z.ZodType = input;
        const declared = publicProcedure.meta(meta).input(accepted).output(output);
        return [name, meta.openapi.method === 'GET' ? declared.query(notServed) : declared.mutation(notServed)];
      }),
    ),
  );
}
