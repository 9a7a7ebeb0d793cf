import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drive } from '../load.ts';
import { DB, DURATION, LARGE, LARGE_TOKEN, N, ROOT, TOKEN } from '../options.ts';
import { type Server, startOptions } from '../servers.ts';
import { aim } from '../targets.ts';

/** At LARGE conversations: single-client latency against the 10k account, and a deep page. */
export async function scale(product: Server) {
  // autocannon's latencies are whole milliseconds, too coarse for a sub-millisecond answer; one
  // connection waits for each answer before sending the next, so its mean latency is 1 / req/s.
  let failed = 0;
  const single = async (token: string, path: string) => {
    const run = await drive(product, { name: path, path: () => path }, 1, Math.max(5, Math.round(DURATION / 2)), token);
    failed += run.non2xx;
    return 1000 / run.rps;
  };
  const lines: string[] = [];
  // get_conversation within 1.1x (issue 39); page 1 within the 1.25x the scale check always had.
  const paths = [
    { path: '/api/v1/conversations/get_conversation', most: 1.1 },
    { path: '/api/v1/conversations/get_conversations?page=1', most: 1.25 },
  ];
  for (const { path, most } of paths) {
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
      `${path}: mean ${small.toFixed(2)} ms at ${N}, ${big.toFixed(2)} ms at ${LARGE} (x${(big / small).toFixed(2)}, target <= ${most})`,
    );
    aim(
      `at ${LARGE}: ${path.replace(/.*\//, '')} mean <= ${most}x at ${N}`,
      `x${(big / small).toFixed(2)}`,
      big / small <= most,
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
export function exportLarge(): string {
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
