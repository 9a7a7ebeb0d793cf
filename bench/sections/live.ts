import { spawn } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { drive, fmt, type Run, SCENARIOS } from '../load.ts';
import { DURATION, log, PAGE_HOST, ROOT } from '../options.ts';
import { rssMb, type Server, start, startOptions } from '../servers.ts';
import { aim } from '../targets.ts';
import { getPage } from './unkept.ts';

/**
 * Live conversations (the pages' event streams): 2,000 streams held open on one process, what
 * each costs in RSS (target <= 20 KB); a post's arrival at the last of 2,000 subscribers spread
 * over two processes, timed from just before the post was sent, which is before its commit
 * (target p99 <= 250 ms); and every API scenario with those 2,000 streams open against the same
 * scenario without them, in three alternations in one run (target >= 0.9x).
 */

const STREAMS = 2_000;
const POSTS = 40;
/** Alternations (without, with, with, without) of the API beside the streams. */
const ROUNDS = 3;
/** The public conversation the streams follow and the posts go to (the reply scenario's). */
const SLUG = 'pages-2';

interface Subscriber {
  /** Message ids seen, with when. */
  seen: Map<number, number>;
  close(): void;
}

/** One EventSource-like reader of the conversation's stream on `server`; resolves once it is open. */
function subscribe(server: Server, agent: http.Agent): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const seen = new Map<number, number>();
    const req = http.get(
      `${server.base}/c/${SLUG}/events`,
      { headers: { host: PAGE_HOST, accept: 'text/event-stream' }, agent },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`a stream was answered ${res.statusCode}`));
          res.resume();
          return;
        }
        res.setEncoding('utf8');
        let opened = false;
        res.on('data', (chunk: string) => {
          if (!opened && chunk.includes('retry:')) {
            opened = true;
            resolve({ seen, close: () => req.destroy() });
          }
          for (const m of chunk.matchAll(/event: posted\ndata: \{"message_id":(\d+)\}/g)) {
            seen.set(Number(m[1]), performance.now());
          }
        });
      },
    );
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
  });
}

/** Opens `n` streams on `server`, a few hundred at a time. */
async function subscribeMany(server: Server, n: number, agent: http.Agent): Promise<Subscriber[]> {
  const all: Subscriber[] = [];
  while (all.length < n) {
    const batch = Math.min(250, n - all.length);
    all.push(...(await Promise.all(Array.from({ length: batch }, () => subscribe(server, agent)))));
  }
  return all;
}

/** Posts a reply through the page's form; its message id. */
async function post(server: Server, form: { cookie: string; csrf: string }, text: string): Promise<number> {
  const body = `csrf=${encodeURIComponent(form.csrf)}&text=${encodeURIComponent(text)}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${server.base}/c/${SLUG}`,
      {
        method: 'POST',
        headers: {
          host: PAGE_HOST,
          cookie: form.cookie,
          origin: `https://${PAGE_HOST}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
      },
      (res) => {
        res.resume();
        const id = Number(/#message-(\d+)$/.exec(res.headers.location ?? '')?.[1]);
        if (res.statusCode === 303 && id) resolve(id);
        else reject(new Error(`a post was answered ${res.statusCode}`));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The same measure of plain node:http holding streams open (bench/baseline/stream-floor.ts, run
 * with the product's V8 options): what Node itself costs a connection with an open answer.
 */
async function floorPerStream(agent: http.Agent): Promise<number> {
  const port = 3305;
  const child = spawn(process.execPath, [...startOptions(), join(ROOT, 'bench/baseline/stream-floor.ts')], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  const floor: Server = { name: 'stream floor', base: `http://127.0.0.1:${port}`, child };
  const opened: Subscriber[] = [];
  try {
    for (let i = 0; ; i++) {
      const up = await fetch(`${floor.base}/`).then(
        async (r) => {
          await r.body?.cancel();
          return true;
        },
        () => false,
      );
      if (up) break;
      if (i > 100) throw new Error('the stream floor server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    opened.push(...(await subscribeMany(floor, STREAMS / 4, agent)));
    await new Promise((r) => setTimeout(r, 2_000));
    const warmed = rssMb(floor);
    opened.push(...(await subscribeMany(floor, STREAMS, agent)));
    await new Promise((r) => setTimeout(r, 2_000));
    return ((rssMb(floor) - warmed) * 1024) / STREAMS;
  } finally {
    for (const s of opened) s.close();
    child.kill('SIGTERM');
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

export async function live(product: Server) {
  const second = await start('product, second process', 'apps/api/src/entry/node.ts', 3304, startOptions());
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  let subscribers: Subscriber[] = [];
  try {
    const { html, cookie } = await getPage(product, `/c/${SLUG}`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    if (!csrf || !cookie) throw new Error(`the live section found no form on /c/${SLUG}`);
    const form = { cookie, csrf };

    // 1. What a stream costs: the RSS 2,000 more streams add to a process already holding some
    // (the first burst of connections also grows V8's young generation, once: reported apart).
    await new Promise((r) => setTimeout(r, 2_000));
    const idle = rssMb(product);
    const warm = await subscribeMany(product, STREAMS / 4, agent);
    await new Promise((r) => setTimeout(r, 2_000));
    const warmed = rssMb(product);
    subscribers = await subscribeMany(product, STREAMS, agent);
    await new Promise((r) => setTimeout(r, 2_000));
    const held = rssMb(product);
    for (const s of warm) s.close();
    const floor = await floorPerStream(agent);
    const perStream = ((held - warmed) * 1024) / STREAMS;
    const fromIdle = ((held - idle) * 1024) / (STREAMS + warm.length);
    log(
      `live: RSS idle ${idle.toFixed(0)} MB, ${warm.length} streams ${warmed.toFixed(0)} MB, ${STREAMS} more ${held.toFixed(0)} MB`,
    );

    // 2. Latency to the last of 2,000 subscribers over two processes (1,000 each).
    for (const s of subscribers.splice(STREAMS / 2)) s.close();
    subscribers.push(...(await subscribeMany(second, STREAMS / 2, agent)));
    const latencies: number[] = [];
    for (let i = 0; i < POSTS; i++) {
      const sent = performance.now();
      const id = await post(product, form, `Live bench ${i}`);
      const deadline = Date.now() + 10_000;
      while (subscribers.some((s) => !s.seen.has(id)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 2));
      }
      const missing = subscribers.filter((s) => !s.seen.has(id)).length;
      if (missing > 0) throw new Error(`${missing} of ${STREAMS} streams never saw message ${id}`);
      latencies.push(Math.max(...subscribers.map((s) => s.seen.get(id) ?? 0)) - sent);
      await new Promise((r) => setTimeout(r, 50));
    }
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);

    // 3. The API with the 2,000 streams open on the product, against the API without them.
    for (const s of subscribers) s.close();
    subscribers = [];
    const rows: string[] = [];
    let lowest = Number.POSITIVE_INFINITY;
    // A run's req/s moves by some 10% from one run to the next whatever the streams do: each
    // scenario is measured in ROUNDS alternations of half-length runs, and their means compared.
    const seconds = Math.max(3, Math.round(DURATION / 2));
    for (const scenario of SCENARIOS) {
      await drive(product, scenario, 16, 2);
      const runs: { with: Run[]; without: Run[] } = { with: [], without: [] };
      for (let round = 0; round < ROUNDS; round++) {
        runs.without.push(await drive(product, scenario, 32, seconds));
        subscribers = await subscribeMany(product, STREAMS, agent);
        // Measured with the streams open, not while 2,000 connections are being made.
        await new Promise((r) => setTimeout(r, 2_000));
        runs.with.push(await drive(product, scenario, 32, seconds));
        runs.with.push(await drive(product, scenario, 32, seconds));
        for (const s of subscribers) s.close();
        subscribers = [];
        await new Promise((r) => setTimeout(r, 2_000));
        runs.without.push(await drive(product, scenario, 32, seconds));
      }
      const mean = (list: Run[]) => list.reduce((sum, r) => sum + r.rps, 0) / list.length;
      const rps = { with: mean(runs.with), without: mean(runs.without) };
      const ratio = rps.with / rps.without;
      lowest = Math.min(lowest, ratio);
      const spread = (list: Run[]) =>
        `${fmt(Math.min(...list.map((r) => r.rps)), 0).trim()}-${fmt(Math.max(...list.map((r) => r.rps)), 0).trim()}`;
      rows.push(
        `  ${scenario.name.padEnd(28)} ${fmt(rps.without)} req/s without (${spread(runs.without)}), ${fmt(rps.with)} with ${STREAMS} streams open (${spread(runs.with)}): x${ratio.toFixed(2)} (non-2xx ${runs.with.reduce((n, r) => n + r.non2xx, 0)})`,
      );
      log(rows.at(-1) as string);
    }

    console.log(`\nlive conversations (the pages' event streams; product only):
  RSS of one process: ${idle.toFixed(0)} MB idle, ${warmed.toFixed(0)} MB with ${STREAMS / 4} streams open, ${held.toFixed(0)} MB with ${STREAMS} more: ${perStream.toFixed(1)} KB a stream (${fromIdle.toFixed(1)} KB counted from idle); plain node:http holding the same streams, measured alike: ${floor.toFixed(1)} KB a stream
  a post to the last of ${STREAMS} subscribers on 2 processes (${POSTS} posts, timed from before each was sent): p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, slowest ${latencies.at(-1)?.toFixed(0)} ms
  the API at 32 connections, ${ROUNDS} rounds of (without, with, with, without), means (slowest-fastest run):
${rows.join('\n')}`);
    aim(
      `live: RSS a stream, ${STREAMS} open <= 20 KB`,
      `${perStream.toFixed(1)} KB (${fromIdle.toFixed(1)} from idle)`,
      perStream <= 20,
    );
    aim(`live: post to last of ${STREAMS} subscribers p99 <= 250 ms`, `p99 ${p99.toFixed(0)} ms`, p99 <= 250);
    aim(`live: API with ${STREAMS} streams >= 0.9x without`, `lowest x${lowest.toFixed(2)}`, lowest >= 0.9);
  } finally {
    for (const s of subscribers) s.close();
    agent.destroy();
    const exited = new Promise((r) => second.child.once('exit', r));
    if (second.child.exitCode === null && second.child.kill('SIGTERM')) await exited;
  }
}
