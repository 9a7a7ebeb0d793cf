/**
 * npm run bench [-- --conversations 10000 --large 1000000 --duration 10 --connections 32,64]
 *
 * Loads a dataset through the project's own seed path, starts the product and the hand-written
 * baseline (bench/baseline) against one PostgreSQL database with production settings, checks that
 * they answer a sample of requests identically, then drives both with autocannon, alternating them
 * so machine noise hits both alike, and prints req/s, p50/p99 latency, non-2xx and the ratios.
 * The parts: options.ts, data.ts, servers.ts, correctness.ts, load.ts, targets.ts, and the
 * sections beside the comparison in sections/.
 */
import { sameAnswers } from './correctness.ts';
import { load } from './data.ts';
import { compare, drive, printHeader, SCENARIOS } from './load.ts';
import { CONNECTIONS, DURATION, EXTRAS, LARGE, log, N, ONLY, opt } from './options.ts';
import { conditional } from './sections/conditional.ts';
import { inboundMail } from './sections/inbound-mail.ts';
import { inbox } from './sections/inbox.ts';
import { intake } from './sections/intake.ts';
import { live } from './sections/live.ts';
import { BENCH_MEDIA_DIR, media } from './sections/media.ts';
import { messages } from './sections/messages.ts';
import { pages } from './sections/pages.ts';
import { pagesUnkept } from './sections/pages-unkept.ts';
import { plays } from './sections/plays.ts';
import { queues } from './sections/queues.ts';
import { replies } from './sections/replies.ts';
import { scale } from './sections/scale.ts';
import { transcripts } from './sections/transcripts.ts';
import { withUnkept } from './sections/unkept.ts';
import { webhooks } from './sections/webhooks.ts';
import { workflows } from './sections/workflows.ts';
import { peakRssMb, runPeak, start, startOptions } from './servers.ts';
import { aim, apiTargets, targets } from './targets.ts';

async function main() {
  const timings = opt['skip-load'] ? {} : await load();
  const product = await start('product', 'apps/api/src/entry/node.ts', 3301, startOptions(), {
    MEDIA_DIR: BENCH_MEDIA_DIR,
  });
  const baseline = await start('baseline', 'bench/baseline/server.ts', 3302);
  try {
    // First, on the data as loaded: later scenarios create conversations in the 10,000 account,
    // and its latest conversation and page 1 would no longer be like the large account's.
    if (LARGE) await scale(product);
    log(`checked ${await sameAnswers(product, baseline)} sample requests: both servers answer identically`);
    const scenarios = SCENARIOS.filter((s) => !ONLY || ONLY.some((item) => s.name.includes(item)));
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
      ? await withUnkept((unkept) => pagesUnkept(unkept, baseline, SCENARIOS))
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
      apiTargets([...reads.measured, ...writes.measured]);
    }
    if (unkeptPages) console.log(unkeptPages);
    if (EXTRAS.has('conditional')) await withUnkept((unkept) => conditional(product, unkept));
    if (EXTRAS.has('pages')) await pages(product);
    if (EXTRAS.has('plays')) await plays(product);
    if (EXTRAS.has('inbox')) await withUnkept((unkept) => inbox(product, unkept));
    if (EXTRAS.has('messages')) await withUnkept((unkept) => messages(product, unkept));
    if (EXTRAS.has('replies')) await replies(product);
    if (EXTRAS.has('intake')) await intake(product);
    if (EXTRAS.has('webhooks')) await webhooks(product);
    if (EXTRAS.has('media')) await media(product);
    if (EXTRAS.has('transcripts')) await transcripts();
    if (EXTRAS.has('inbound')) await inboundMail();
    if (EXTRAS.has('workflows')) await workflows(product);
    if (EXTRAS.has('live')) await live(product);
    if (EXTRAS.has('queues')) await queues();
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

await main();
