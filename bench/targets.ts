import type { Compared } from './load.ts';
import { CONNECTIONS } from './options.ts';

/** Every target the run measures, printed as one table at the end. */
export const targets: { target: string; reached: string; met: boolean }[] = [];
export const aim = (target: string, reached: string, met: boolean) => targets.push({ target, reached, met });

const lowest = (xs: number[]) => Math.min(...xs);
const highest = (xs: number[]) => Math.max(...xs);
const x = (n: number) => `x${n.toFixed(2)}`;

/**
 * Issue 39's targets for the API rows, from the comparison's rows (those a run with `--only`
 * skipped are not aimed at): the lookups at least 1.1x the baseline with p99 at the most
 * connections no worse than its; create at least 1.05x, with what a create costs the product and
 * PostgreSQL in CPU at most 1.3x what one costs the baseline and PostgreSQL; and the product's
 * resident memory (each row's peak) at most 1.3x the baseline's in every row.
 */
export function apiTargets(rows: Compared[]): void {
  const most = Math.max(...CONNECTIONS);
  const ratio = (r: Compared) => r.ratio;
  const lookups = rows.filter((r) => r.scenario.startsWith('get_conversation '));
  if (lookups.length > 0) {
    aim(
      'get_conversation >= 1.10x the baseline, every row',
      `lowest ${x(lowest(lookups.map(ratio)))}`,
      lowest(lookups.map(ratio)) >= 1.1,
    );
    const p99 = highest(lookups.filter((r) => r.connections === most).map((r) => r.p99ratio));
    aim(`get_conversation p99 <= the baseline's at ${most} connections`, `worst ${x(p99)}`, p99 <= 1);
  }
  const creates = rows.filter((r) => r.scenario === 'create_conversation');
  if (creates.length > 0) {
    aim(
      'create_conversation >= 1.05x the baseline',
      `lowest ${x(lowest(creates.map(ratio)))}`,
      lowest(creates.map(ratio)) >= 1.05,
    );
    const cpu = highest(creates.map((r) => r.product.cpuMs / Math.max(r.baseline.cpuMs, 0.001)));
    const pg = highest(creates.map((r) => r.product.pgMs / Math.max(r.baseline.pgMs, 0.001)));
    aim(
      'create CPU a request <= 1.30x the baseline (server, PostgreSQL)',
      `worst ${x(cpu)}, ${x(pg)}`,
      cpu <= 1.3 && pg <= 1.3,
    );
  }
  if (rows.length > 0) {
    const rss = highest(rows.map((r) => r.product.rss / Math.max(r.baseline.rss, 1)));
    aim('resident memory <= 1.30x the baseline, every API row', `worst ${x(rss)}`, rss <= 1.3);
  }
}
