import pg from 'pg';
import { drive, fmt, settled } from '../load.ts';
import { CONNECTIONS, DB, DURATION, PAGE_HOST } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';
import { CREATE, getPage, postForm } from './unkept.ts';

/**
 * Conversations started through an intake page's form (`/p/bench-intake`: a visitor's name,
 * address and message; each start a new private conversation with its first message, the
 * visitor's pass and the mail with their link back, answered 303) against create_conversation,
 * alternated in one run (target: >= 0.8x). Each round begins once the queues are empty again:
 * a start queues a mail to the visitor and a notification to the team, which the workers send
 * after the answer, and without the wait the next round (a create's) paid for them. What they
 * cost after a start's round is printed beside it.
 */
export async function intake(product: Server) {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  try {
    await db.query(
      `insert into intake_page (account_id, name, key, title, is_primary)
       select id, 'Bench intake', 'bench-intake', 'Talk to us', false from account where host = $1
       on conflict do nothing`,
      [`https://${PAGE_HOST}`],
    );
  } finally {
    await db.end();
  }
  const { html, cookie } = await getPage(product, '/p/bench-intake');
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!csrf || !cookie) throw new Error('the intake scenario found no form on /p/bench-intake');
  const body = new URLSearchParams({
    csrf,
    name: 'Bench Visitor',
    email: 'visitor@bench.example',
    text: 'Hello, I would like to talk to you about the benchmark.',
  }).toString();
  const start = (c: number) => postForm(product, '/p/bench-intake', { cookie, body }, c);
  const rows: string[] = [];
  let lowest = Number.POSITIVE_INFINITY;
  let bad = 0;
  for (const c of CONNECTIONS) {
    await settled(product);
    resetPeak(product);
    const s1 = await start(c);
    const after1 = await settled(product);
    const c1 = await drive(product, CREATE, c, DURATION);
    await settled(product);
    const c2 = await drive(product, CREATE, c, DURATION);
    await settled(product);
    const s2 = await start(c);
    const after2 = await settled(product);
    const rps = { start: (s1.rps + s2.rps) / 2, create: (c1.rps + c2.rps) / 2 };
    const starts = (s1.rps + s2.rps) * DURATION;
    lowest = Math.min(lowest, rps.start / rps.create);
    bad += s1.bad + s2.bad;
    // What each costs the product and PostgreSQL, per request: on two shared cores, where the ratio comes from.
    const ms = (a: number, b: number) => ((a + b) / 2).toFixed(2);
    rows.push(
      `${String(c).padStart(5)} conns: intake start ${fmt(rps.start)} starts/s (not 303: ${s1.bad + s2.bad}), create_conversation ${fmt(rps.create)} req/s (non-2xx ${c1.non2xx + c2.non2xx}), start/create x${(rps.start / rps.create).toFixed(2)}; peak RSS ${peakRssMb(product)} MB`,
      `             CPU a request: start ${ms(s1.cpuMs, s2.cpuMs)} ms product + ${ms(s1.pgMs, s2.pgMs)} ms PostgreSQL, create ${ms(c1.cpuMs, c2.cpuMs)} ms + ${ms(c1.pgMs, c2.pgMs)} ms`,
      `             and a start's queued work left after its round (the mails, the notification): ${((after1.serverMs + after2.serverMs) / starts).toFixed(2)} ms product + ${((after1.pgMs + after2.pgMs) / starts).toFixed(2)} ms PostgreSQL`,
    );
  }
  console.log(`\nconversations started through an intake page's form (product only):\n${rows.join('\n')}`);
  aim('intake start >= 0.8x create_conversation req/s', `lowest x${lowest.toFixed(2)}`, lowest >= 0.8 && bad === 0);
}
