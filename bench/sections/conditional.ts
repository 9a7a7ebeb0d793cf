import { drive, fmt, type Run, type Scenario } from '../load.ts';
import { CONNECTIONS, DURATION, TOKEN } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';

/**
 * get_conversations page 1 as a poller sends it, with the ETag of its last answer in If-None-Match
 * (nothing changed: 304, no body, no quota), against the full page 1, alternated in one run
 * (target: the 304 path at >= 5x the full page read from the database). The product keeps page 1
 * in memory while nothing changes, so the full page is measured twice: as kept, and on the
 * product keeping no page (the page as read after each change to the account).
 */
export async function conditional(product: Server, unkept: Server) {
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
