import pg from 'pg';
import { drive, fmt, type Scenario } from '../load.ts';
import { CONNECTIONS, DB, DURATION, N } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';

/** The bench account's site, and a session of its owner (a team owner) made for the run. */
const HOST = 'bench.example.com';
const SESSION = 'benchinboxsessiontoken000000000000000000000';

/**
 * The team's inbox (`/` for a signed-in team member: 50 conversations of the N, latest activity
 * first, with counts, tags, unread marks, the person, the latest message and the triage), as it
 * opens, searched and filtered, against get_conversations page 1 read from the database (the
 * product keeping no page), alternated in one run (target: >= 0.8x).
 */
export async function inbox(product: Server, unkept: Server) {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  try {
    await db.query(
      `insert into site_session (account_id, user_id, token_hash, expires_at)
       select id, owner_id, encode(sha256(convert_to($1, 'UTF8')), 'hex'), now() + interval '1 day'
       from account where key = 'bench'
       on conflict do nothing`,
      [SESSION],
    );
  } finally {
    await db.end();
  }
  const cookie = { cookie: `convo_session=${SESSION}` };
  // The inbox as a team member opens it; searched for a few conversations' words (about 1 in 90
  // of the titles, and their messages, far down the activity order); for a word every message
  // says; for a word none says (the whole walk, then the index); and filtered.
  const pages: Scenario[] = [
    { name: 'inbox', path: () => '/', headers: cookie },
    { name: 'inbox ?q=conversation 42', path: () => '/?q=conversation%2042', headers: cookie },
    { name: 'inbox ?q=message', path: () => '/?q=message', headers: cookie },
    { name: 'inbox ?q=zebra', path: () => '/?q=zebra', headers: cookie },
    { name: 'inbox ?state=open&assignee=nobody', path: () => '/?state=open&assignee=nobody', headers: cookie },
  ];
  const list: Scenario = { name: 'page 1', path: () => '/api/v1/conversations/get_conversations?page=1' };
  for (const p of pages) {
    const check = await fetchInbox(product, p.path());
    // A page the server gave up on (its statement timed out: 503) is counted in the row's non-2xx.
    const answered = check.includes('class="inbox"') || check.includes('No conversation matches.');
    if (!answered && !check.includes('<title>Unavailable')) {
      throw new Error(`the ${p.name} scenario's page is wrong: ${check.slice(0, 300)}`);
    }
  }
  const rows: string[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (const c of CONNECTIONS) {
    for (const page of pages) {
      resetPeak(product);
      const r1 = await drive(unkept, list, c, DURATION);
      const i1 = await drive(product, page, c, DURATION, undefined, HOST);
      const i2 = await drive(product, page, c, DURATION, undefined, HOST);
      const r2 = await drive(unkept, list, c, DURATION);
      const rps = { inbox: (i1.rps + i2.rps) / 2, list: (r1.rps + r2.rps) / 2 };
      worst = Math.min(worst, rps.inbox / rps.list);
      rows.push(
        `${String(c).padStart(5)} conns: ${page.name} ${fmt(rps.inbox)} req/s (p99 ${Math.max(i1.p99, i2.p99)} ms, non-2xx ${i1.non2xx + i2.non2xx}), ` +
          `get_conversations page 1 read ${fmt(rps.list)} req/s, x${(rps.inbox / rps.list).toFixed(2)}; peak RSS ${peakRssMb(product)} MB`,
      );
    }
  }
  console.log(`\nthe team's inbox, ${N} conversations (product only):\n${rows.join('\n')}`);
  aim(
    "team's inbox (50 of them; searched, filtered) >= 0.80x get_conversations page 1 read",
    `lowest x${worst.toFixed(2)}`,
    worst >= 0.8,
  );
}

async function fetchInbox(server: Server, path: string): Promise<string> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    http
      .get(`${server.base}${path}`, { headers: { host: HOST, cookie: `convo_session=${SESSION}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}
