import type { AnyProcedure } from '@trpc/server';
import type { z } from 'zod';
import type { Context } from './context.ts';
import type { ErrorCode } from './errors.ts';
import { createCallerFactory, type Meta, router } from './trpc.ts';

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

/** An operation: its declaration, and a caller of its own procedure (tRPC's documented caller API). */
export function operation(spec: OperationSpec, procedure: AnyProcedure): Operation {
  const createCaller = createCallerFactory(router({ run: procedure }));
  return { ...spec, call: (ctx, input) => createCaller(ctx).run(input) };
}
