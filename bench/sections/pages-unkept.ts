import { compare, drive, type Scenario } from '../load.ts';
import { CONNECTIONS } from '../options.ts';
import { peakRssMb, runPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';

/**
 * The page rows of the comparison again, on the product keeping no page in memory: every page read
 * from the database and built anew, as the first read after each change to the account is. Its
 * table, as text to print after the comparison's.
 */
export async function pagesUnkept(unkept: Server, baseline: Server, scenarios: Scenario[]): Promise<string | null> {
  const paging = scenarios.filter((s) => s.name.startsWith('get_conversations'));
  if (paging.length === 0) return null;
  for (const s of paging) await drive(unkept, s, 16, 2);
  const { rows, worst } = await compare(unkept, baseline, paging);
  aim('pages read from the database >= 1.00x the baseline', `lowest x${worst.ratio.toFixed(2)}`, worst.ratio >= 1);
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
