import type { AppRouter } from '@convo/router';
import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError } from '@trpc/client';

/*
 * The typed client for TypeScript frontends. Only the router's *type* is imported, so a bundle
 * carries @trpc/client and nothing of the server.
 */

export interface ConversationsClientOptions {
  /** Where the service runs, e.g. `https://conversations.example.com` (no trailing /trpc). */
  baseUrl: string;
  /** The account's API token. */
  token: string;
  /** Send calls made in the same tick as one HTTP request (tRPC batching). Default false. */
  batch?: boolean;
  /** A fetch to use instead of the global one (tests, proxies, server-side rendering). */
  fetch?: typeof globalThis.fetch;
}

export function createConversationsClient(options: ConversationsClientOptions) {
  const link = (options.batch ? httpBatchLink : httpLink)({
    url: `${options.baseUrl.replace(/\/+$/, '')}/trpc`,
    headers: { authorization: `Bearer ${options.token}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return createTRPCClient<AppRouter>({ links: [link] });
}

export type ConversationsClient = ReturnType<typeof createConversationsClient>;

/** The API's error, with the service's machine-readable code and HTTP status when it gave them. */
export function describeError(e: unknown): { message: string; code: string | null; status: number | null } | null {
  if (!(e instanceof TRPCClientError)) return null;
  const data = (e as TRPCClientError<AppRouter>).data as { appCode?: string; httpStatus?: number } | undefined;
  return { message: e.message, code: data?.appCode ?? null, status: data?.httpStatus ?? null };
}

export type { AppRouter };
