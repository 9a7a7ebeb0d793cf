import pg from 'pg';
import { pick } from '../correctness.ts';
import { drive, fmt, type Run, type Scenario } from '../load.ts';
import { CONNECTIONS, DB, DURATION, log, N } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';

/**
 * Workflow steps draining while the API answers: 10,000 conversations of the bench account are
 * given a one-step workflow copy (add a tag) whose job is due now, and the product's workers run
 * them while get_conversation ?slug is driven; the same read alone, before and after, is the
 * comparison (targets: >= 500 steps/s, and the read >= 0.9x of itself without the drain).
 */
export async function workflows(product: Server) {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  const steps = Math.min(N, 10_000);
  const read: Scenario = {
    name: 'get_conversation ?slug',
    path: () => `/api/v1/conversations/get_conversation?slug=bench-${pick(N)}`,
  };
  const copy = {
    id: 0,
    name: 'Bench drain',
    steps: [
      {
        trigger: { type: 'conversation.created' },
        action: { type: 'add_tags', tags: ['drained'] },
        state: 'pending',
        due_at: null,
        done_at: null,
        error: null,
        runs: 0,
      },
    ],
  };
  const pending = async () =>
    Number((await db.query("select count(*)::int as n from workflow_job where state = 'pending'")).rows[0].n);
  const rows: string[] = [];
  let slowest = Number.POSITIVE_INFINITY;
  let lowest = Number.POSITIVE_INFINITY;
  try {
    const [account] = (await db.query("select id from account where key = 'bench'")).rows;
    // Warmed up first: the section may run alone (`--only`), with nothing driven before it.
    await drive(product, read, 16, 3);
    for (const c of CONNECTIONS) {
      resetPeak(product);
      const before: Run = await drive(product, read, c, DURATION);
      await db.query(
        `with chosen as (select id from conversation where account_id = $1 order by id limit $2),
         copied as (update conversation set workflow = $3::jsonb where id in (select id from chosen) returning id)
         insert into workflow_job (account_id, conversation_id, step, occurrence, due_at)
         select $1, id, 0, 'bench:' || $4, now() from copied`,
        [account.id, steps, JSON.stringify(copy), String(c)],
      );
      const started = performance.now();
      let drainedMs = 0;
      const watch = (async () => {
        while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 50));
        drainedMs = performance.now() - started;
      })();
      const during: Run = await drive(product, read, c, DURATION);
      await watch;
      const after: Run = await drive(product, read, c, DURATION);
      const alone = (before.rps + after.rps) / 2;
      const rate = steps / (drainedMs / 1000);
      slowest = Math.min(slowest, rate);
      lowest = Math.min(lowest, during.rps / alone);
      rows.push(
        `${String(c).padStart(5)} conns: ${steps} due steps drained in ${(drainedMs / 1000).toFixed(1)} s (${fmt(rate)} steps/s); ` +
          `get_conversation ?slug during the drain ${fmt(during.rps)} req/s, alone ${fmt(alone)} req/s (before ${fmt(before.rps)}, after ${fmt(after.rps)}), x${(during.rps / alone).toFixed(2)}; peak RSS ${peakRssMb(product)} MB`,
      );
      // Undone, so that the next run and the sections after this one see the data as loaded.
      await db.query(
        `delete from conversation_tag where tag_id in (select id from tag where account_id = $1 and name = 'drained');
         delete from workflow_job where account_id = $1;
         update conversation set workflow = null where account_id = $1 and workflow->>'name' = 'Bench drain';`.replaceAll(
          '$1',
          String(Number(account.id)),
        ),
      );
      log(`workflows: ${c} connections done`);
    }
  } finally {
    await db.end();
  }
  console.log(`\nworkflow steps draining while the API answers (product only):\n${rows.join('\n')}`);
  aim('10,000 due workflow steps drain at >= 500 steps/s', `slowest ${slowest.toFixed(0)} steps/s`, slowest >= 500);
  aim('get_conversation during the drain >= 0.90x alone', `lowest x${lowest.toFixed(2)}`, lowest >= 0.9);
}
