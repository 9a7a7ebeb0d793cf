/**
 * npm run bench [-- --conversations 10000 --large 1000000 --duration 10 --connections 32,64]
 *
 * Loads a dataset through the project's own seed path, starts the product and the hand-written
 * baseline (bench/baseline) against one PostgreSQL database with production settings, checks that
 * they answer a sample of requests identically, then drives both with autocannon, alternating them
 * so machine noise hits both alike, and prints req/s, p50/p99 latency, non-2xx and the ratios.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';

const ROOT = new URL('..', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: {
    conversations: { type: 'string', default: '10000' },
    large: { type: 'string' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/convo_bench' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32,64' },
    'skip-load': { type: 'boolean', default: false },
    only: { type: 'string' },
    /** The sections to run after the comparison (default all). */
    extras: { type: 'string', default: 'conditional,unkept,pages,replies,webhooks' },
  },
});
const EXTRAS = new Set(String(opt.extras).split(','));
const DB = opt['database-url'] as string;
const N = Number(opt.conversations);
const LARGE = opt.large ? Number(opt.large) : 0;
const DURATION = Number(opt.duration);
const CONNECTIONS = String(opt.connections).split(',').map(Number);
const TOKEN = 'cnv_bench_token_for_the_benchmark_only_0000000000';
const LARGE_TOKEN = 'cnv_bench_token_for_the_large_account_00000000000';
/** An account of its own for the HTML page scenario: one conversation of PAGE_MESSAGES messages. */
const PAGE_TOKEN = 'cnv_bench_token_for_the_page_account_000000000000';
const PAGE_HOST = 'pages.example.com';
const PAGE_MESSAGES = 50;

const log = (s: string) => process.stderr.write(`${s}\n`);

// ---------------------------------------------------------------- data

async function writeSeed(file: string, key: string, token: string, count: number, messages = 5): Promise<void> {
  const out = createWriteStream(file);
  const write = (s: string) => (out.write(s) ? undefined : new Promise<void>((r) => out.once('drain', () => r())));
  const users = [0, 1, 2].map((i) => ({ email: `user${i}@${key}.example.com`, name: `User ${i}` }));
  await write(
    `{"accounts":[{"key":${JSON.stringify(key)},"name":"Bench","host":"https://${key}.example.com","owner":"${users[0]?.email}",` +
      `"users":${JSON.stringify(users)},"tokens":[{"name":"bench","token":"${token}"}],"conversations":[`,
  );
  const start = Date.UTC(2020, 0, 1);
  for (let i = 1; i <= count; i++) {
    const created = new Date(start + i * 60_000).toISOString().replace('Z', `${String(i % 1000).padStart(3, '0')}Z`);
    const c = {
      title: `Bench conversation ${i}`,
      slug: `${key}-${i}`,
      created_at: created,
      members: users.map((u) => u.email),
      tags: ['alpha', 'beta'],
      messages: Array.from({ length: messages }, (_, j) => ({
        author: j % 2 ? null : users[j % 3]?.email,
        text: `Message ${j} of conversation ${i}`,
      })),
    };
    await write((i === 1 ? '' : ',') + JSON.stringify(c));
  }
  await write(']}]}');
  await new Promise<void>((r) => out.end(r));
}

function cli(args: string[], env: Record<string, string> = {}): string {
  return execFileSync(process.execPath, [join(ROOT, 'apps/api/src/cli/main.ts'), ...args], {
    env: { ...process.env, DATABASE_URL: DB, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

async function load(): Promise<Record<string, number>> {
  const url = new URL(DB);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.query(`create database "${name}"`);
  await admin.end();
  cli(['migrate']);
  const dir = mkdtempSync(join(tmpdir(), 'convo-bench-'));
  const timings: Record<string, number> = {};
  try {
    const accounts: [string, string, number, number][] = [
      ['bench', TOKEN, N, 5],
      // pages-1 is read by the page scenario; pages-2 takes the replies of the reply scenario.
      ['pages', PAGE_TOKEN, 2, PAGE_MESSAGES],
    ];
    if (LARGE) accounts.push(['large', LARGE_TOKEN, LARGE, 5]);
    for (const [key, token, count, messages] of accounts) {
      const file = join(dir, `${key}.json`);
      await writeSeed(file, key, token, count, messages);
      log(`loading ${count} conversations (${messages} messages, 3 members, 2 tags each) through \`convo seed\`…`);
      const report = JSON.parse(cli(['seed', file, '--json']));
      timings[key] = report.seconds;
      log(`  loaded in ${report.seconds.toFixed(1)} s (${Math.round(count / report.seconds)} conversations/s)`);
      rmSync(file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  await db.query('vacuum analyze');
  await db.end();
  return timings;
}

// ---------------------------------------------------------------- servers

interface Server {
  name: string;
  base: string;
  child: ChildProcess;
}

/**
 * The Node options `npm start` (or `npm run cli`) runs with (package.json's scripts; the
 * Dockerfile repeats start's, and infra/test/manifests.test.ts holds the two together): the
 * product is measured as it is deployed.
 */
function startOptions(script: 'start' | 'cli' = 'start'): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return (pkg.scripts[script] ?? '').split(/\s+/).filter((word) => word.startsWith('--'));
}

async function start(
  name: string,
  script: string,
  port: number,
  options: string[] = [],
  env: Record<string, string> = {},
): Promise<Server> {
  const child = spawn(process.execPath, [...options, join(ROOT, script)], {
    env: {
      ...process.env,
      ...env,
      DATABASE_URL: DB,
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      DB_POOL_MAX: '10',
      LOG_LEVEL: 'info',
      MIGRATE_ON_START: 'false',
      // The reply scenario posts from one address as fast as it can.
      FORM_LIMIT_PER_IP: '0',
      FORM_LIMIT_PER_EMAIL: '0',
      // The webhook scenario's receiver listens on 127.0.0.1.
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${base}/api/v1/conversations/get_conversation`, {
      headers: { authorization: TOKEN },
    }).catch(() => null);
    if (res?.ok) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      // A server that came up but cannot answer (no bench data yet) must not keep the port.
      child.kill();
      throw new Error(`${name} did not start (was the data loaded? --skip-load needs an earlier run)`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { name, base, child };
}

/** The highest RSS since the last `resetPeak` (the kernel's VmHWM), and the highest of the whole run. */
const runPeak = new Map<string, number>();
function peakRssMb(server: Server): number {
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  const mb = Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  runPeak.set(server.name, Math.max(runPeak.get(server.name) ?? 0, mb));
  return mb;
}

/** Starts a new peak-RSS window (writing 5 to clear_refs resets VmHWM to the current RSS). */
function resetPeak(server: Server): void {
  peakRssMb(server);
  writeFileSync(`/proc/${server.child.pid}/clear_refs`, '5');
}

/** Every target the run measures, printed as one table at the end. */
const targets: { target: string; reached: string; met: boolean }[] = [];
const aim = (target: string, reached: string, met: boolean) => targets.push({ target, reached, met });

// ---------------------------------------------------------------- correctness

const pick = (n: number) => 1 + Math.floor(Math.random() * n);
const GET = (path: string) => ({ path, init: { headers: { authorization: `Bearer ${TOKEN}` } } });
const POST = (body: unknown) => ({
  path: '/api/v1/conversations/create_conversation',
  init: {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  },
});

/** Fields that legitimately differ between two creates: their ids and the URLs built from them. */
function normaliseCreated(body: Record<string, unknown>) {
  const { id: _id, slug: _s, conversation_url: _u, conversation_embed_url: _e, ...rest } = body;
  return rest;
}

async function sameAnswers(a: Server, b: Server): Promise<number> {
  const samples = [
    GET('/api/v1/conversations/get_conversation'),
    GET('/api/v1/conversations/get_conversation?slug=BENCH-7'),
    GET(`/api/v1/conversations/get_conversation?title=bench%20conversation%20${pick(N)}`),
    GET('/api/v1/conversations/get_conversation?title=no%20such%20title'),
    GET('/api/v1/conversations/get_conversation?title=Bench%20conversation%203&slug=bench-3'),
    GET('/api/v1/conversations/get_conversations'),
    GET('/api/v1/conversations/get_conversations?page=100'),
    GET(`/api/v1/conversations/get_conversations?page=${pick(Math.ceil(N / 50))}`),
    GET(`/api/v1/conversations/get_conversations?page=${Math.ceil(N / 50) + 1}`),
  ];
  for (const s of samples) {
    const [x, y] = await Promise.all([fetch(a.base + s.path, s.init), fetch(b.base + s.path, s.init)]);
    const [bx, by] = await Promise.all([x.json(), y.json()]);
    if (x.status !== y.status || (x.ok && !isDeepStrictEqual(bx, by))) {
      throw new Error(
        `answers differ for ${s.path}:\n${a.name} ${x.status} ${JSON.stringify(bx).slice(0, 400)}\n${b.name} ${y.status} ${JSON.stringify(by).slice(0, 400)}`,
      );
    }
  }
  const create = POST({ title: 'Compared create', anyone_can_post: false });
  const [x, y] = await Promise.all([
    fetch(a.base + create.path, create.init),
    fetch(b.base + create.path, create.init),
  ]);
  const [cx, cy] = [
    normaliseCreated((await x.json()) as Record<string, unknown>),
    normaliseCreated((await y.json()) as Record<string, unknown>),
  ];
  if (x.status !== 201 || y.status !== 201 || !isDeepStrictEqual(cx, cy)) {
    throw new Error(`create answers differ:\n${JSON.stringify(cx)}\n${JSON.stringify(cy)}`);
  }
  return samples.length + 1;
}

// ---------------------------------------------------------------- load

interface Scenario {
  name: string;
  method?: 'GET' | 'POST';
  path: () => string;
  body?: string;
  headers?: Record<string, string>;
}

const SCENARIOS: Scenario[] = [
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

interface Run {
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
}

/** A process's CPU time so far in ms (utime + stime of /proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuTimeMs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function drive(
  server: Server,
  s: Scenario,
  connections: number,
  seconds: number,
  token = TOKEN,
  host?: string,
): Promise<Run> {
  const cpuBefore = cpuTimeMs(server.child.pid);
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
        setupRequest: (req) => ({ ...req, path: s.path(), ...(s.body ? { body: s.body } : {}) }),
      },
    ],
  });
  return {
    rps: result.requests.average,
    mean: result.latency.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
    notModified: result['3xx'],
    cpuMs: (cpuTimeMs(server.child.pid) - cpuBefore) / Math.max(result.requests.total, 1),
  };
}

const fmt = (n: number, d = 0) => n.toFixed(d).padStart(8);

interface Worst {
  ratio: number;
  p99: number;
  non2xx: number;
}

/** Each scenario at each connection count on both servers, alternating which goes first. */
async function compare(product: Server, baseline: Server, scenarios: Scenario[]) {
  const rows: string[] = [];
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
      worst = {
        ratio: Math.min(worst.ratio, ratio),
        p99: c === most ? Math.max(worst.p99, p99ratio) : worst.p99,
        non2xx: worst.non2xx + p.non2xx,
      };
      rows.push(
        `${s.name.padEnd(28)}${String(c).padStart(5)} |${fmt(p.rps)}${fmt(p.p50)}${fmt(p.p99)}${fmt(p.non2xx)}${fmt(p.rss)}${fmt(p.cpuMs, 2)} |${fmt(b.rps)}${fmt(b.p50)}${fmt(b.p99)}${fmt(b.non2xx)}${fmt(b.rss)}${fmt(b.cpuMs, 2)} |${fmt(ratio, 2)}${fmt(p99ratio, 2)}${fmt(p.cpuMs / Math.max(b.cpuMs, 0.001), 2)}`,
      );
      log(rows.at(-1) as string);
    }
  }
  return { rows, worst };
}

function printHeader(): void {
  const side = `${'req/s'.padStart(8)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'non2xx'.padStart(8)}${'RSS MB'.padStart(8)}${'CPU ms'.padStart(8)}`;
  console.log(
    `\n${' '.repeat(34)}| ${'product'.padEnd(48)}| baseline (node:http + pg)${' '.repeat(23)}| product/baseline`,
  );
  console.log(
    `${'scenario'.padEnd(28)}${'conns'.padStart(5)} |${side} |${side} |${'rps x'.padStart(8)}${'p99 x'.padStart(8)}${'CPU x'.padStart(8)}`,
  );
}

async function main() {
  const timings = opt['skip-load'] ? {} : await load();
  const product = await start('product', 'apps/api/src/entry/node.ts', 3301, startOptions());
  const baseline = await start('baseline', 'bench/baseline/server.ts', 3302);
  try {
    // First, on the data as loaded: later scenarios create conversations in the 10,000 account,
    // and its latest conversation and page 1 would no longer be like the large account's.
    if (LARGE) await scale(product);
    log(`checked ${await sameAnswers(product, baseline)} sample requests: both servers answer identically`);
    const scenarios = SCENARIOS.filter((s) => !opt.only || s.name.includes(opt.only));
    for (const s of scenarios) {
      await drive(product, s, 16, 2);
      await drive(baseline, s, 16, 2);
    }
    const most = Math.max(...CONNECTIONS);
    const reads = await compare(
      product,
      baseline,
      scenarios.filter((s) => s.method !== 'POST'),
    );
    // The pages without the cache on the data as loaded, before the creates make page 1 and 100
    // of conversations with no messages.
    const unkeptPages = EXTRAS.has('unkept')
      ? await withUnkept((unkept) => pagesUnkept(unkept, baseline, scenarios))
      : null;
    const writes = await compare(
      product,
      baseline,
      scenarios.filter((s) => s.method === 'POST'),
    );
    const worst = {
      ratio: Math.min(reads.worst.ratio, writes.worst.ratio),
      p99: Math.max(reads.worst.p99, writes.worst.p99),
      non2xx: reads.worst.non2xx + writes.worst.non2xx,
    };
    printHeader();
    console.log([...reads.rows, ...writes.rows].join('\n'));
    console.log(
      `\nconversations: ${N}${LARGE ? ` (+ ${LARGE} in a second account)` : ''}; load: ${
        Object.entries(timings)
          .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
          .join(', ') || 'skipped'
      }; ${DURATION} s a run; RSS: the peak during that run (VmHWM, reset before it); CPU: the server's CPU time per request`,
    );
    if (scenarios.length > 0) {
      aim('req/s >= 0.80x the baseline, every row', `lowest x${worst.ratio.toFixed(2)}`, worst.ratio >= 0.8);
      aim(`p99 <= 1.50x the baseline at ${most} connections`, `worst x${worst.p99.toFixed(2)}`, worst.p99 <= 1.5);
      aim('product non-2xx = 0', String(worst.non2xx), worst.non2xx === 0);
    }
    if (unkeptPages) console.log(unkeptPages);
    if (EXTRAS.has('conditional')) await withUnkept((unkept) => conditional(product, unkept));
    if (EXTRAS.has('pages')) await pages(product);
    if (EXTRAS.has('replies')) await replies(product);
    if (EXTRAS.has('webhooks')) await webhooks(product);
    // The last window folded in, the run's peaks: every scenario and section above, warm-up included.
    for (const server of [product, baseline]) peakRssMb(server);
    const peak = { product: runPeak.get('product') ?? 0, baseline: runPeak.get('baseline') ?? 0 };
    aim(
      'product peak RSS < 250 MB through the whole run',
      `${peak.product} MB (baseline ${peak.baseline} MB)`,
      peak.product < 250,
    );
    const width = Math.max(...targets.map((t) => t.target.length));
    console.log(
      `\ntargets:\n${targets.map((t) => `  ${t.target.padEnd(width)}  ${t.reached.padEnd(44)}  ${t.met ? 'met' : 'NOT MET'}`).join('\n')}`,
    );
  } finally {
    for (const s of [product, baseline]) s.child.kill('SIGTERM');
  }
}

/**
 * Runs `section` beside the product again, keeping no page in memory (PAGE_CACHE_MB=0): every page
 * read from the database and built anew, as the first read after each change to an account is.
 * Started for the section alone, so that its timers and workers never run beside another's.
 */
async function withUnkept<T>(section: (unkept: Server) => Promise<T>): Promise<T> {
  const unkept = await start('product, no page kept', 'apps/api/src/entry/node.ts', 3303, startOptions(), {
    PAGE_CACHE_MB: '0',
  });
  try {
    return await section(unkept);
  } finally {
    const exited = new Promise((r) => unkept.child.once('exit', r));
    if (unkept.child.exitCode === null && unkept.child.kill('SIGTERM')) await exited;
  }
}

/** A page of the PAGE_HOST account's site (fetch may not set Host; node:http may), with its visitor cookie. */
function getPage(server: Server, path: string): Promise<{ status: number; html: string; cookie: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.base}${path}`, { headers: { host: PAGE_HOST } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        const cookie = (res.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '';
        res.on('end', () => resolve({ status: res.statusCode ?? 0, html: body, cookie }));
      })
      .on('error', reject);
  });
}

/**
 * get_conversations page 1 as a poller sends it, with the ETag of its last answer in If-None-Match
 * (nothing changed: 304, no body, no quota), against the full page 1, alternated in one run
 * (target: the 304 path at >= 5x the full page read from the database). The product keeps page 1
 * in memory while nothing changes, so the full page is measured twice: as kept, and on the
 * product keeping no page (the page as read after each change to the account).
 */
async function conditional(product: Server, unkept: Server) {
  const path = '/api/v1/conversations/get_conversations?page=1';
  // Creates still in flight when the previous scenario stopped may commit after it: let them.
  await new Promise((r) => setTimeout(r, 1_000));
  const first = await fetch(`${product.base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  await first.arrayBuffer();
  const tag = first.headers.get('etag') ?? '';
  const full: Scenario = { name: 'page 1', path: () => path };
  const revalidated: Scenario = { name: 'page 1, 304', path: () => path, headers: { 'if-none-match': tag } };
  const rows: string[] = [];
  let lowest = Number.POSITIVE_INFINITY;
  for (const c of CONNECTIONS) {
    resetPeak(product);
    const runs = { kept: [] as Run[], read: [] as Run[], notModified: [] as Run[] };
    for (let round = 0; round < 2; round++) {
      runs.read.push(await drive(unkept, full, c, DURATION));
      runs.kept.push(await drive(product, full, c, DURATION));
      runs.notModified.push(await drive(product, revalidated, c, DURATION));
    }
    const mean = (xs: Run[]) => xs.reduce((n, r) => n + r.rps, 0) / xs.length;
    const answered304 = runs.notModified.reduce((n, r) => n + r.notModified, 0);
    const other = runs.notModified.reduce((n, r) => n + r.non2xx - r.notModified, 0);
    const ratio = mean(runs.notModified) / mean(runs.read);
    lowest = Math.min(lowest, ratio);
    rows.push(
      `${String(c).padStart(5)} conns: page 1 with If-None-Match ${fmt(mean(runs.notModified))} req/s (304: ${answered304}, other non-2xx: ${other}), ` +
        `full page 1 read ${fmt(mean(runs.read))} req/s, x${ratio.toFixed(2)}; full page 1 kept ${fmt(mean(runs.kept))} req/s, x${(mean(runs.notModified) / mean(runs.kept)).toFixed(2)}; peak RSS ${peakRssMb(product)} MB`,
    );
  }
  console.log(`\nconditional reads (product only):\n${rows.join('\n')}`);
  aim(
    'page 1 with a matching If-None-Match (304) >= 5x the full page 1 read',
    `lowest x${lowest.toFixed(2)}`,
    lowest >= 5,
  );
}

/**
 * The page rows of the comparison again, on the product keeping no page in memory: every page read
 * from the database and built anew, as the first read after each change to the account is. Its
 * table, as text to print after the comparison's.
 */
async function pagesUnkept(unkept: Server, baseline: Server, scenarios: Scenario[]): Promise<string | null> {
  const paging = scenarios.filter((s) => s.name.startsWith('get_conversations'));
  if (paging.length === 0) return null;
  for (const s of paging) await drive(unkept, s, 16, 2);
  const { rows, worst } = await compare(unkept, baseline, paging);
  aim('pages read from the database >= 0.80x the baseline', `lowest x${worst.ratio.toFixed(2)}`, worst.ratio >= 0.8);
  aim(
    `pages read from the database: p99 <= 1.50x at ${Math.max(...CONNECTIONS)} connections`,
    `worst x${worst.p99.toFixed(2)}`,
    worst.p99 <= 1.5,
  );
  peakRssMb(unkept);
  const peak = runPeak.get(unkept.name) ?? 0;
  aim('peak RSS < 250 MB keeping no page', `${peak} MB`, peak < 250);
  return `\npages read from the database: the product keeping no page (PAGE_CACHE_MB=0), on the data as loaded\n${rows.join('\n')}`;
}

/**
 * create_conversation with one endpoint subscribed to conversation_created (each create writes its
 * event and a delivery in the same statement, and the server's worker delivers it to a receiver on
 * 127.0.0.1) against the same with none, alternated in one run (target: >= 0.9x).
 */
async function webhooks(product: Server) {
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume().on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const address = receiver.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
  const env = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
  const create: Scenario = {
    name: 'create',
    method: 'POST',
    path: () => '/api/v1/conversations/create_conversation',
    body: '{"title":"Bench create"}',
  };
  const subscribe = () =>
    JSON.parse(
      cli(['webhook', 'add', '--account', 'bench', '--url', url, '--events', 'conversation_created', '--json'], env),
    ).id as number;
  const unsubscribe = (id: number) => cli(['webhook', 'remove', '--account', 'bench', '--id', String(id), '--json']);
  const rows: string[] = [];
  const ROUNDS = 4;
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  };
  let lowest = Number.POSITIVE_INFINITY;
  try {
    for (const c of CONNECTIONS) {
      resetPeak(product);
      // Four rounds, the order turned each round (without then with, then with then without), so
      // that the machine's drift and the table's growth between runs fall on both sides alike;
      // each subscription starts with an empty queue and is removed after its run.
      const without: Run[] = [];
      const withEndpoint: Run[] = [];
      const withOne = async () => {
        const id = subscribe();
        withEndpoint.push(await drive(product, create, c, DURATION));
        unsubscribe(id);
      };
      for (let round = 0; round < ROUNDS; round++) {
        if (round % 2 === 1) await withOne();
        without.push(await drive(product, create, c, DURATION));
        if (round % 2 === 0) await withOne();
      }
      const rps = { with: median(withEndpoint.map((r) => r.rps)), without: median(without.map((r) => r.rps)) };
      const ratios = withEndpoint.map((r, i) => (r.rps / (without[i] as Run).rps).toFixed(2)).join(', ');
      lowest = Math.min(lowest, rps.with / rps.without);
      rows.push(
        `${String(c).padStart(5)} conns: create with an endpoint ${fmt(rps.with)} req/s (non-2xx ${withEndpoint.reduce((n, r) => n + r.non2xx, 0)}), without ${fmt(rps.without)} req/s (medians of ${ROUNDS}), x${(rps.with / rps.without).toFixed(2)} (rounds: ${ratios}); peak RSS ${peakRssMb(product)} MB`,
      );
    }
  } finally {
    receiver.close();
  }
  console.log(
    `\ncreate with a webhook endpoint subscribed (product only; events received: ${received}):\n${rows.join('\n')}`,
  );
  aim('create with a webhook endpoint >= 0.90x without', `lowest x${lowest.toFixed(2)}`, lowest >= 0.9);
}

/**
 * Replies posted through a conversation page's form (each a new message, answered 303) against
 * create_conversation, alternated in one run.
 */
async function replies(product: Server) {
  const { html, cookie } = await getPage(product, '/c/pages-2');
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!csrf || !cookie) throw new Error('the reply scenario found no form on /c/pages-2');
  const reply = async (c: number) => {
    const result = await autocannon({
      url: product.base,
      connections: c,
      duration: DURATION,
      headers: {
        host: PAGE_HOST,
        cookie,
        origin: `https://${PAGE_HOST}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      requests: [{ method: 'POST', path: '/c/pages-2', body: `csrf=${encodeURIComponent(csrf)}&text=Bench+reply` }],
    });
    const redirected = result.statusCodeStats?.['303']?.count ?? 0;
    return { rps: result.requests.average, bad: result.errors + result.timeouts + result.requests.total - redirected };
  };
  const create: Scenario = {
    name: 'create',
    method: 'POST',
    path: () => '/api/v1/conversations/create_conversation',
    body: '{"title":"Bench create"}',
  };
  const rows: string[] = [];
  for (const c of CONNECTIONS) {
    resetPeak(product);
    const r1 = await reply(c);
    const c1 = await drive(product, create, c, DURATION);
    const c2 = await drive(product, create, c, DURATION);
    const r2 = await reply(c);
    const rps = { reply: (r1.rps + r2.rps) / 2, create: (c1.rps + c2.rps) / 2 };
    rows.push(
      `${String(c).padStart(5)} conns: reply ${fmt(rps.reply)} posts/s (not 303: ${r1.bad + r2.bad}), create_conversation ${fmt(rps.create)} req/s (non-2xx ${c1.non2xx + c2.non2xx}), reply/create x${(rps.reply / rps.create).toFixed(2)}; peak RSS ${peakRssMb(product)} MB`,
    );
  }
  console.log(`\nreplies posted through the page's form (product only):\n${rows.join('\n')}`);
}

/**
 * The HTML page of a conversation with PAGE_MESSAGES messages against get_conversation on the same
 * conversation, alternated in one run (target: the page at >= 0.8x), and the API's list page beside them.
 */
async function pages(product: Server) {
  const { status, html } = await getPage(product, '/c/pages-1');
  if (status !== 200 || (html.match(/class="message"/g) ?? []).length !== PAGE_MESSAGES) {
    throw new Error(`the page scenario's page is wrong: ${status} ${html.slice(0, 200)}`);
  }
  const rows: string[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (const c of CONNECTIONS) {
    resetPeak(product);
    const api = { name: 'api', path: () => '/api/v1/conversations/get_conversation?slug=pages-1' };
    const htmlPage = { name: 'page', path: () => '/c/pages-1' };
    const list = { name: 'list', path: () => '/api/v1/conversations/get_conversations?page=1' };
    const a1 = await drive(product, api, c, DURATION, PAGE_TOKEN);
    const p1 = await drive(product, htmlPage, c, DURATION, PAGE_TOKEN, PAGE_HOST);
    const p2 = await drive(product, htmlPage, c, DURATION, PAGE_TOKEN, PAGE_HOST);
    const a2 = await drive(product, api, c, DURATION, PAGE_TOKEN);
    const l = await drive(product, list, c, DURATION);
    const rps = { api: (a1.rps + a2.rps) / 2, page: (p1.rps + p2.rps) / 2 };
    worst = Math.min(worst, rps.page / rps.api);
    rows.push(
      `${String(c).padStart(5)} conns: page ${fmt(rps.page)} req/s (p99 ${Math.max(p1.p99, p2.p99)} ms, non-2xx ${p1.non2xx + p2.non2xx}), ` +
        `get_conversation ${fmt(rps.api)} req/s (non-2xx ${a1.non2xx + a2.non2xx}), page/api x${(rps.page / rps.api).toFixed(2)}; ` +
        `get_conversations page 1 ${fmt(l.rps)} req/s; peak RSS ${peakRssMb(product)} MB`,
    );
  }
  console.log(`\nconversation page, ${PAGE_MESSAGES} messages (product only):\n${rows.join('\n')}`);
  aim('conversation page (50 messages) >= 0.80x get_conversation on it', `lowest x${worst.toFixed(2)}`, worst >= 0.8);
}

/** At LARGE conversations: single-client latency against the 10k account, and a deep page. */
async function scale(product: Server) {
  // autocannon's latencies are whole milliseconds, too coarse for a sub-millisecond answer; one
  // connection waits for each answer before sending the next, so its mean latency is 1 / req/s.
  let failed = 0;
  const single = async (token: string, path: string) => {
    const run = await drive(product, { name: path, path: () => path }, 1, Math.max(5, Math.round(DURATION / 2)), token);
    failed += run.non2xx;
    return 1000 / run.rps;
  };
  const lines: string[] = [];
  for (const path of ['/api/v1/conversations/get_conversation', '/api/v1/conversations/get_conversations?page=1']) {
    await single(TOKEN, path);
    await single(LARGE_TOKEN, path);
    // Alternated twice, so that machine noise falls on both accounts alike.
    const small1 = await single(TOKEN, path);
    const big1 = await single(LARGE_TOKEN, path);
    const big2 = await single(LARGE_TOKEN, path);
    const small2 = await single(TOKEN, path);
    const small = (small1 + small2) / 2;
    const big = (big1 + big2) / 2;
    lines.push(
      `${path}: mean ${small.toFixed(2)} ms at ${N}, ${big.toFixed(2)} ms at ${LARGE} (x${(big / small).toFixed(2)}, target <= 1.25)`,
    );
    aim(
      `at ${LARGE}: ${path.replace(/.*\//, '')} mean <= 1.25x at ${N}`,
      `x${(big / small).toFixed(2)}`,
      big / small <= 1.25,
    );
  }
  const deep = await drive(
    product,
    { name: 'deep', path: () => '/api/v1/conversations/get_conversations?page=2000' },
    1,
    5,
    LARGE_TOKEN,
  );
  lines.push(`non-2xx in the latency runs above: ${failed}`);
  lines.push(`page 2000 at ${LARGE}: p50 ${deep.p50} ms, p99 ${deep.p99} ms, non-2xx ${deep.non2xx} (target < 50 ms)`);
  aim(`at ${LARGE}: page 2000 p99 < 50 ms, one client`, `${deep.p99} ms`, deep.p99 < 50 && deep.non2xx === 0);
  lines.push(exportLarge());
  console.log(`\nscale (one client):\n${lines.join('\n')}`);
}

/**
 * The large account through `convo export`, as an operator runs it: its rate, and the CLI
 * process's peak RSS (GNU time's maximum resident set), which must not grow with the account.
 */
function exportLarge(): string {
  const dir = mkdtempSync(join(tmpdir(), 'convo-export-'));
  const file = join(dir, 'large.json');
  try {
    const run = spawnSync(
      '/usr/bin/time',
      [
        '-f',
        'maxrss %M',
        process.execPath,
        ...startOptions('cli'),
        join(ROOT, 'apps/api/src/cli/main.ts'),
        'export',
        '--account',
        'large',
        '--out',
        file,
        '--json',
      ],
      { env: { ...process.env, DATABASE_URL: DB, LOG_LEVEL: 'warn' }, encoding: 'utf8' },
    );
    if (run.status !== 0) throw new Error(`export failed: ${run.stderr}`);
    const report = JSON.parse(run.stdout) as { conversations: number; messages: number; seconds: number };
    const peakMb = Number(/maxrss (\d+)/.exec(run.stderr)?.[1] ?? 0) / 1024;
    const mb = statSync(file).size / 1_048_576;
    aim(
      `export of the ${LARGE} account: CLI peak RSS < 300 MB`,
      `${Math.round(peakMb)} MB`,
      peakMb > 0 && peakMb < 300,
    );
    return `export of the ${LARGE} account: ${report.conversations} conversations, ${report.messages} messages, ${mb.toFixed(0)} MB in ${report.seconds.toFixed(0)} s (${Math.round(report.conversations / report.seconds)} conversations/s), peak RSS ${Math.round(peakMb)} MB`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
