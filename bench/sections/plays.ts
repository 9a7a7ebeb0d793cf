import autocannon from 'autocannon';
import pg from 'pg';
import { cpuMeter, drive, fmt, median, SCENARIOS } from '../load.ts';
import { CONNECTIONS, DB, DURATION, PAGE_HOST } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';
import { getPage, postForm } from './unkept.ts';

/**
 * Played receipts (issue 42): the beacon a page's player sends when a recording has played long
 * enough (`POST /c/pages-2/messages/<id>/played?ticket=…`, one visitor's session again and again: each is
 * checked, its recording's access read and its play kept once, answered 204) against the
 * comparison's get_conversation ?slug (a conversation of 5 messages), alternated in one run
 * (target: the beacon at >= 0.8x); and what the beacon costs the page: its page views a second
 * by VISITORS visitors in turn, alone, and when every view sends its visitor's beacon (each
 * watching past the threshold, the most beacons a page can bring), side by side in rounds
 * (target: the page loses under 5 %).
 */
export async function plays(product: Server) {
  const id = await plantRecordedMessage('pages-2');
  const visitors = await readVisitors(product, id);
  // The beacon's own row: the first visitor's, again and again.
  const first = visitors[0];
  if (!first) throw new Error('no visitor met the page');
  const { cookie, ticket } = first;
  const beacon = (c: number) => postForm(product, beaconPath(id, ticket), { cookie }, c, '204');
  // The comparison's own lookup: a conversation of 5 messages by its slug.
  const api = SCENARIOS.find((s) => s.name === 'get_conversation ?slug');
  if (!api) throw new Error('the comparison has no get_conversation ?slug scenario');
  const rows: string[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (const c of CONNECTIONS) {
    resetPeak(product);
    const b1 = await beacon(c);
    const a1 = await drive(product, api, c, DURATION);
    const a2 = await drive(product, api, c, DURATION);
    const b2 = await beacon(c);
    const rps = { beacon: (b1.rps + b2.rps) / 2, api: (a1.rps + a2.rps) / 2 };
    worst = Math.min(worst, rps.beacon / rps.api);
    rows.push(
      `${String(c).padStart(5)} conns: beacon ${fmt(rps.beacon)} req/s (not 204: ${b1.bad + b2.bad}; ` +
        `CPU ${((b1.cpuMs + b2.cpuMs) / 2).toFixed(2)} ms, PostgreSQL ${((b1.pgMs + b2.pgMs) / 2).toFixed(2)} ms a beacon), ` +
        `get_conversation ?slug ${fmt(rps.api)} req/s (non-2xx ${a1.non2xx + a2.non2xx}), beacon/api x${(rps.beacon / rps.api).toFixed(2)}; ` +
        `peak RSS ${peakRssMb(product)} MB`,
    );
  }
  console.log(`\nplayed receipts' beacon (product only):\n${rows.join('\n')}`);
  aim('played beacon >= 0.80x get_conversation ?slug', `lowest x${worst.toFixed(2)}`, worst >= 0.8);

  const views = (c: number, withBeacon: boolean) => visits(product, visitors, withBeacon ? id : null, c);
  const costs: string[] = [];
  let dearest = 0;
  for (const c of CONNECTIONS) {
    // The page's own rate wanders by more than the cost measured: COST_ROUNDS rounds of the two
    // side by side, the order turned each round, and the median of the rounds' costs.
    const rounds: { alone: Views; both: Views }[] = [];
    for (let round = 0; round < COST_ROUNDS; round++) {
      const first = await views(c, round % 2 === 1);
      const second = await views(c, round % 2 === 0);
      rounds.push(round % 2 === 1 ? { both: first, alone: second } : { alone: first, both: second });
    }
    const each = rounds.map((r) => 1 - r.both.rate / r.alone.rate);
    const cost = median(each);
    dearest = Math.max(dearest, cost);
    // Where a view's CPU went, alone and with its beacon (medians of the rounds): the product's, the
    // database's, and the bench's own client's, which shares the machine's two cores.
    const cpu = (side: 'alone' | 'both', of: keyof Views['cpu']) => median(rounds.map((r) => r[side].cpu[of]));
    const split = (['serverMs', 'pgMs', 'clientMs'] as const)
      .map((of) => `${SIDES[of]} ${cpu('alone', of).toFixed(2)} → ${cpu('both', of).toFixed(2)}`)
      .join(', ');
    const share = (cpu('both', 'serverMs') / cpu('alone', 'serverMs') - 1) * 100;
    costs.push(
      `${String(c).padStart(5)} conns: page views ${fmt(median(rounds.map((r) => r.alone.rate)))}/s alone, ` +
        `${fmt(median(rounds.map((r) => r.both.rate)))}/s each with its beacon: the beacon costs the page ` +
        `${(cost * 100).toFixed(1)} % (rounds: ${each.map((x) => (x * 100).toFixed(1)).join(', ')} %); ` +
        `CPU a view alone → with its beacon, ms: ${split}; the product's ${share < 0 ? '' : '+'}${share.toFixed(1)} %`,
    );
  }
  console.log(
    `\nthe beacon's cost to the page (/c/pages-2, a view then its beacon on each connection; median of ${COST_ROUNDS} rounds):\n${costs.join('\n')}`,
  );
  aim(
    'the beacon costs the page < 5 % of its views a second (every view sending one)',
    `most ${(dearest * 100).toFixed(1)} %`,
    dearest < 0.05,
  );
}

/** Rounds of page views alone and with beacons, side by side, whose costs' median is the cost. */
const COST_ROUNDS = 5;

/** The visitors whose views (and beacons) the cost is measured with, each its own browser. */
const VISITORS = 3_000;

/** Where a player reports its play of message `id` with `ticket`, as the page's script sends it. */
const beaconPath = (id: number, ticket: string) =>
  `/c/pages-2/messages/${id}/played?${new URLSearchParams({ ticket })}`;

/** A visitor as the page met them: their cookie, and the ticket their player reports with. */
interface PageVisitor {
  cookie: string;
  ticket: string;
}

/** VISITORS first visits of /c/pages-2, 16 at a time: each visitor's cookie and their player's ticket. */
async function readVisitors(product: Server, id: number): Promise<PageVisitor[]> {
  const found = new RegExp(`data-play="/c/pages-2/messages/${id}/played"[^>]*data-ticket="([^"]+)"`);
  const visitors: PageVisitor[] = [];
  while (visitors.length < VISITORS) {
    const batch = await Promise.all(Array.from({ length: 16 }, () => getPage(product, '/c/pages-2')));
    for (const { html, cookie } of batch) {
      const ticket = found.exec(html)?.[1];
      if (!ticket || !cookie) throw new Error('a first visit of /c/pages-2 found no player reporting plays');
      visitors.push({ cookie, ticket });
    }
  }
  return visitors;
}

/** Page views a second, and the CPU a view cost each side (with its beacon's when it sent one). */
interface Views {
  rate: number;
  cpu: ReturnType<ReturnType<typeof cpuMeter>>;
}

/** How the section's lines name the sides of a view's CPU. */
const SIDES = { serverMs: 'product', pgMs: 'postgres', clientMs: 'client' } as const;

/**
 * The page viewed as fast as `connections` allow for DURATION, each view by the next of
 * `visitors` (round and round), followed by that visitor's beacon of message `beacon` when given:
 * page views a second (every answer must be 2xx), and what a view cost each side. Each
 * visitor's play is their own, so the beacons' plays are written as distinct rows (until the
 * visitors come round again, whose plays are kept already).
 */
async function visits(
  product: Server,
  visitors: readonly PageVisitor[],
  beacon: number | null,
  connections: number,
): Promise<Views> {
  const spent = cpuMeter(product);
  let next = 0;
  // Each connection's context carries the visitor of its view to its beacon.
  const viewing = new WeakMap<object, PageVisitor>();
  const page: autocannon.Request = {
    method: 'GET',
    path: '/c/pages-2',
    setupRequest: (req, context) => {
      const visitor = visitors[next++ % visitors.length] as PageVisitor;
      viewing.set(context, visitor);
      return { ...req, headers: { ...req.headers, cookie: visitor.cookie } };
    },
  };
  const played: autocannon.Request = {
    method: 'POST',
    setupRequest: (req, context) => {
      const visitor = viewing.get(context);
      if (!visitor || beacon === null) throw new Error('a beacon came before its view');
      return { ...req, path: beaconPath(beacon, visitor.ticket), headers: { ...req.headers, cookie: visitor.cookie } };
    },
  };
  const result = await autocannon({
    url: product.base,
    connections,
    duration: DURATION,
    headers: { host: PAGE_HOST, origin: `https://${PAGE_HOST}` },
    requests: beacon === null ? [page] : [page, played],
  });
  if (result.non2xx + result.errors > 0) {
    throw new Error(`the page views met ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  }
  // With beacons, every other request is one: a view is two requests.
  const perView = beacon === null ? 1 : 2;
  return { rate: result.requests.average / perView, cpu: spent(result.requests.total / perView) };
}

/**
 * A recorded message in the page account's conversation `slug`, as a kept recording's row (the
 * beacon reads the row, never the bytes); anonymous, so every visitor's play is a receipt. Its
 * key is a media key's shape, so a transcribing server later finds the file missing and fails its
 * transcript at once, rather than trying a key it cannot read again and again (transcripts.ts
 * waits for every transcript to settle).
 */
async function plantRecordedMessage(slug: string): Promise<number> {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: number }>(
      `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, anonymous, text,
                            media_key, media_content_type, media_bytes)
       select c.account_id, c.id, 'video', 30, true, '', c.account_id || '/' || md5('bench-played'), 'video/webm', 1000
       from conversation c join account a on a.id = c.account_id
       where a.host like $1 and c.slug = $2 returning id`,
      [`%${PAGE_HOST}`, slug],
    );
    const id = rows[0]?.id;
    if (!id) throw new Error(`the page account has no conversation ${slug}: load the bench data first`);
    return id;
  } finally {
    await db.end();
  }
}
