/*
 * A closed-loop load of `workers` concurrent clients, each sending its next request as soon as the
 * last is answered, recording every request's outcome. The fault tests need each request's fate
 * (which creates were acknowledged, how long a failure took, which connections broke), which a
 * throughput tool's aggregates do not give; throughput itself is measured with autocannon.
 */

import { type Dispatcher, fetch as undiciFetch } from 'undici';

export interface Outcome {
  kind: 'create' | 'read';
  started: number;
  ms: number;
  /** The HTTP status, or 0 when the request failed without an answer. */
  status: number;
  body?: any;
  /** The network error's code (ECONNREFUSED, ECONNRESET, …) when there was no answer. */
  error?: string;
  /** Which server a load balancer passed the request to (its X-Upstream header), when it says. */
  upstream?: string;
}

export interface Load {
  outcomes: Outcome[];
  stop(): Promise<void>;
}

export type Send = (worker: number, n: number) => Promise<Outcome>;

const errorCode = (e: unknown): string => {
  let c: unknown = e;
  for (let i = 0; i < 4 && c; i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    c = (c as { cause?: unknown }).cause;
  }
  return String((e as Error)?.message ?? e);
};

/**
 * One request through fetch, its outcome recorded. With a `dispatcher` (an undici Agent), the
 * request goes through that pool instead of the global one.
 */
export async function request(
  kind: Outcome['kind'],
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  dispatcher?: Dispatcher,
): Promise<Outcome> {
  const started = performance.now();
  try {
    const signal = AbortSignal.timeout(30_000);
    const res = dispatcher
      ? await undiciFetch(url, { ...init, signal, dispatcher })
      : await fetch(url, { ...init, signal });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const upstream = res.headers.get('x-upstream') ?? undefined;
    return {
      kind,
      started,
      ms: performance.now() - started,
      status: res.status,
      body,
      ...(upstream ? { upstream } : {}),
    };
  } catch (e) {
    return { kind, started, ms: performance.now() - started, status: 0, error: errorCode(e) };
  }
}

export function startLoad(workers: number, send: Send): Load {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let n = 0; running; n++) {
      const o = await send(w, n);
      outcomes.push(o);
      // A refused connection answers at once: do not spin on it.
      if (o.status === 0) await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
