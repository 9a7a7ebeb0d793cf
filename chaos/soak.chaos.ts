import autocannon from 'autocannon';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep } from './support/load.ts';
import { startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { createAccount, type ServerProcess, startServer } from './support/server.ts';

/*
 * A bounded soak: mixed load (creates, lookups by slug and title, pages, a 404, a 401) for
 * SOAK_SECONDS (300 by default). A leak shows as live objects that survive full collections: the
 * server runs with --trace-gc, and the heap left after each mark-compact in the last third of the
 * run must stay within noise of the first third's (after warm-up). RSS, sampled every 5 s, is
 * reported but judged only against runaway growth (at most twice its size after warm-up): it
 * rises in steps whenever V8 enlarges its young generation (up to 128 MB), at a moment that
 * differs from run to run — one CI run saw a 60 MB step at 160 s with the live heap flat.
 */

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const WARMUP_S = Math.min(30, Math.floor(SECONDS / 4));
/** What "noise" is allowed in the live heap between the thirds' medians. */
const HEAP_NOISE = { ratio: 1.1, mb: 5 };
/** RSS may grow by steps of V8's young generation, never to twice its size after warm-up. */
const RSS_RUNAWAY = 2;

let db: ThrowawayPostgres;
let server: ServerProcess;
let token: string;

beforeAll(async () => {
  db = await startThrowawayPostgres();
  token = createAccount(db.url, 'soak').token;
  server = await startServer(db.url, { RATE_LIMIT: '600000' }, ['--trace-gc']);
});
afterAll(async () => {
  await server?.kill();
  db?.destroy();
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

it(`keeps its memory level under ${SECONDS} s of mixed load`, async () => {
  const auth = { authorization: `Bearer ${token}` };
  const json = { ...auth, 'content-type': 'application/json' };
  let n = 0;
  const samples: { s: number; mb: number }[] = [];
  const started = Date.now();
  const sampler = setInterval(() => samples.push({ s: (Date.now() - started) / 1000, mb: server.rssMb() }), 5_000);
  let warm = 0;
  const warmup = setTimeout(() => {
    warm = server.liveHeapMb().length;
  }, WARMUP_S * 1000);
  const result = await autocannon({
    url: server.baseUrl,
    connections: 32,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/conversations/create_conversation',
        headers: json,
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ title: `soak ${++n}`, slug: `soak-${n}` }) }),
      },
      { method: 'GET', path: '/api/v1/conversations/get_conversation?slug=soak-1', headers: auth },
      { method: 'GET', path: '/api/v1/conversations/get_conversation?title=soak%202', headers: auth },
      { method: 'GET', path: '/api/v1/conversations/get_conversations?page=1', headers: auth },
      { method: 'GET', path: '/api/v1/conversations/get_conversations?page=3', headers: auth },
      { method: 'GET', path: '/api/v1/conversations/get_conversations?page=100000', headers: auth },
      { method: 'GET', path: '/api/v1/conversations/get_conversation' },
    ],
  });
  clearInterval(sampler);
  clearTimeout(warmup);
  await sleep(100);
  const live = server.liveHeapMb().slice(warm);
  const thirdOfGcs = Math.max(1, Math.floor(live.length / 3));
  const liveEarly = median(live.slice(0, thirdOfGcs));
  const liveLate = median(live.slice(-thirdOfGcs));

  const steady = samples.filter((x) => x.s >= WARMUP_S);
  const third = Math.max(1, Math.floor(steady.length / 3));
  const early = median(steady.slice(0, third).map((x) => x.mb));
  const late = median(steady.slice(-third).map((x) => x.mb));
  const halfway = samples.find((x) => x.s >= SECONDS / 2)?.mb ?? 0;
  const end = samples.at(-1)?.mb ?? 0;
  const peak = Math.max(...samples.map((x) => x.mb));
  console.log(
    [
      `soak: ${SECONDS} s, ${result.requests.total} requests (${Math.round(result.requests.average)} req/s), ` +
        `${result.errors} errors, ${result.timeouts} timeouts, ${result['5xx']} 5xx`,
      `  RSS after warm-up ${early.toFixed(0)} MB, half-way ${halfway.toFixed(0)} MB, at the end ${end.toFixed(0)} MB (last third's median ${late.toFixed(0)} MB), peak ${peak.toFixed(0)} MB`,
      `  live heap after full collections (${live.length} after warm-up): first third's median ${liveEarly.toFixed(1)} MB, last third's ${liveLate.toFixed(1)} MB`,
      `  RSS samples (s:MB): ${samples.map((x) => `${x.s.toFixed(0)}:${x.mb.toFixed(0)}`).join(' ')}`,
    ].join('\n'),
  );
  expect(server.child.exitCode, server.output()).toBeNull();
  expect(result.errors).toBe(0);
  expect(result['5xx']).toBe(0);
  expect(live.length).toBeGreaterThanOrEqual(3);
  expect(liveLate).toBeLessThanOrEqual(liveEarly * HEAP_NOISE.ratio + HEAP_NOISE.mb);
  expect(peak).toBeLessThanOrEqual(early * RSS_RUNAWAY);
});
