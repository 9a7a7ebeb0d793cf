import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import pg from 'pg';
import { pick } from './correctness.ts';
import { CONNECTIONS, DB, DURATION, log, N, TOKEN } from './options.ts';
import { peakRssMb, resetPeak, type Server } from './servers.ts';

/* The load: each scenario driven with autocannon on both servers, alternated, and the rows printed. */

export interface Scenario {
  name: string;
  method?: 'GET' | 'POST';
  path: () => string;
  /** The body, or a function that makes each request's. */
  body?: string | (() => string);
  headers?: Record<string, string>;
}

export const SCENARIOS: Scenario[] = [
  { name: 'get_conversation (latest)', path: () => '/api/v1/conversations/get_conversation' },
  { name: 'get_conversation ?slug', path: () => `/api/v1/conversations/get_conversation?slug=bench-${pick(N)}` },
  {
    name: 'get_conversation ?title',
    path: () => `/api/v1/conversations/get_conversation?title=Bench%20conversation%20${pick(N)}`,
  },
  { name: 'get_conversations page 1', path: () => '/api/v1/conversations/get_conversations?page=1' },
  { name: 'get_conversations page 100', path: () => '/api/v1/conversations/get_conversations?page=100' },
  {
    name: 'create_conversation',
    method: 'POST',
    path: () => '/api/v1/conversations/create_conversation',
    body: '{"title":"Bench create"}',
  },
];

export interface Run {
  rps: number;
  mean: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Answers 304 Not Modified (counted in non2xx too). */
  notModified: number;
  /**
   * The server's CPU time (user + system, every thread: GC helpers too) per request answered.
   * On two cores shared with PostgreSQL and the load generator, req/s moves by 10-15% between
   * identical runs; what a request costs the server shows where a ratio came from.
   */
  cpuMs: number;
  /** PostgreSQL's CPU time (every process of it) per request answered. */
  pgMs: number;
}

/**
 * A process's CPU time so far in ms (utime + stime of /proc/<pid>/stat, in clock ticks of 10 ms),
 * with `children` that of its children that ended and were waited for (cutime + cstime).
 */
export function cpuTimeMs(pid: number | undefined, children = false): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const own = Number(fields[11]) + Number(fields[12]);
  return (children ? own + Number(fields[13]) + Number(fields[14]) : own) * 10;
}

/**
 * The CPU time so far of every PostgreSQL process on this machine (the server's backends,
 * writer, WAL writer …), in ms: what a run cost the database, read before and after it. A backend
 * that ended (a pool's connection closed) is counted in its postmaster's children's time, so the
 * sum never goes back.
 */
export function postgresCpuMs(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuTimeMs(Number(pid), true);
    } catch {
      // The process ended while it was being read.
    }
  }
  return total;
}

/**
 * The CPU spent from now on by `server`, by PostgreSQL, and by this process (the load generator,
 * on the same cores), in ms a unit of work once `units` were done (a request, a page view).
 */
export function cpuMeter(server: Server): (units: number) => { serverMs: number; pgMs: number; clientMs: number } {
  const before = { server: cpuTimeMs(server.child.pid), pg: postgresCpuMs(), client: process.cpuUsage() };
  return (units) => {
    const each = Math.max(units, 1);
    const client = process.cpuUsage(before.client);
    return {
      serverMs: (cpuTimeMs(server.child.pid) - before.server) / each,
      pgMs: (postgresCpuMs() - before.pg) / each,
      clientMs: (client.user + client.system) / 1000 / each,
    };
  };
}

/** What the product's queues hold that is due now: notifications, mail, workflow and webhook events. */
const DUE_WORK = `select (select count(*) from notify_event)
  + (select count(*) from notification_digest where due_at <= now())
  + (select count(*) from outgoing_mail where sent_at is null and attempts < 8 and next_attempt_at <= now())
  + (select count(*) from workflow_event)
  + (select count(*) from webhook_event where not dispatched) as n`;

/**
 * Waits (a minute at most) until the product's queues hold nothing due, so that a round does not
 * pay for the work the one before it queued; says what that work cost, in ms of the product's and
 * PostgreSQL's CPU.
 */
export async function settled(server: Server): Promise<{ serverMs: number; pgMs: number }> {
  const spent = cpuMeter(server);
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  try {
    const deadline = Date.now() + 60_000;
    while (Number((await db.query<{ n: string }>(DUE_WORK)).rows[0]?.n ?? 0) > 0) {
      if (Date.now() > deadline) throw new Error("the product's queues did not empty within a minute");
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await db.end();
  }
  const { serverMs, pgMs } = spent(1);
  return { serverMs, pgMs };
}

export async function drive(
  server: Server,
  s: Scenario,
  connections: number,
  seconds: number,
  token = TOKEN,
  host?: string,
): Promise<Run> {
  const spent = cpuMeter(server);
  const result = await autocannon({
    url: server.base,
    connections,
    duration: seconds,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(host ? { host } : {}),
      ...s.headers,
    },
    requests: [
      {
        method: s.method ?? 'GET',
        setupRequest: (req) => ({
          ...req,
          path: s.path(),
          ...(s.body ? { body: typeof s.body === 'function' ? s.body() : s.body } : {}),
        }),
      },
    ],
  });
  const cpu = spent(result.requests.total);
  return {
    rps: result.requests.average,
    mean: result.latency.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
    notModified: result['3xx'],
    cpuMs: cpu.serverMs,
    pgMs: cpu.pgMs,
  };
}

export const fmt = (n: number, d = 0) => n.toFixed(d).padStart(8);

export interface Worst {
  ratio: number;
  p99: number;
  non2xx: number;
}

/**
 * One row of a comparison: a scenario at a connection count, on each server (with its peak RSS in
 * MB), and the product's req/s and p99 over the baseline's.
 */
export interface Compared {
  scenario: string;
  connections: number;
  product: Run & { rss: number };
  baseline: Run & { rss: number };
  ratio: number;
  p99ratio: number;
}

/** Each scenario at each connection count on both servers, alternating which goes first. */
export async function compare(product: Server, baseline: Server, scenarios: Scenario[]) {
  const rows: string[] = [];
  const measured: Compared[] = [];
  let order = [product, baseline];
  const most = Math.max(...CONNECTIONS);
  let worst: Worst = { ratio: Number.POSITIVE_INFINITY, p99: 0, non2xx: 0 };
  for (const s of scenarios) {
    for (const c of CONNECTIONS) {
      const runs = new Map<string, Run & { rss: number }>();
      for (const server of order) {
        resetPeak(server);
        const run = await drive(server, s, c, DURATION);
        runs.set(server.name, { ...run, rss: peakRssMb(server) });
      }
      order = [...order].reverse();
      const p = runs.get(product.name) as Run & { rss: number };
      const b = runs.get(baseline.name) as Run & { rss: number };
      const ratio = p.rps / b.rps;
      const p99ratio = p.p99 / Math.max(b.p99, 1);
      measured.push({ scenario: s.name, connections: c, product: p, baseline: b, ratio, p99ratio });
      worst = {
        ratio: Math.min(worst.ratio, ratio),
        p99: c === most ? Math.max(worst.p99, p99ratio) : worst.p99,
        non2xx: worst.non2xx + p.non2xx,
      };
      const side = (r: Run & { rss: number }) =>
        `${fmt(r.rps)}${fmt(r.p50)}${fmt(r.p99)}${fmt(r.non2xx)}${fmt(r.rss)}${fmt(r.cpuMs, 2)}${fmt(r.pgMs, 2)}`;
      rows.push(
        `${s.name.padEnd(28)}${String(c).padStart(5)} |${side(p)} |${side(b)} |${fmt(ratio, 2)}${fmt(p99ratio, 2)}${fmt(p.cpuMs / Math.max(b.cpuMs, 0.001), 2)}${fmt(p.pgMs / Math.max(b.pgMs, 0.001), 2)}`,
      );
      log(rows.at(-1) as string);
    }
  }
  return { rows, worst, measured };
}

export function printHeader(): void {
  const side = `${'req/s'.padStart(8)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'non2xx'.padStart(8)}${'RSS MB'.padStart(8)}${'CPU ms'.padStart(8)}${'PG ms'.padStart(8)}`;
  console.log(
    `\n${' '.repeat(34)}| ${'product'.padEnd(56)}| baseline (node:http + pg)${' '.repeat(31)}| product/baseline`,
  );
  console.log(
    `${'scenario'.padEnd(28)}${'conns'.padStart(5)} |${side} |${side} |${'rps x'.padStart(8)}${'p99 x'.padStart(8)}${'CPU x'.padStart(8)}${'PG x'.padStart(8)}`,
  );
}

/** The middle of `xs` (the mean of the two middle ones for an even count). */
export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
