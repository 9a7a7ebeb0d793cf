import autocannon from 'autocannon';
import { drive, fmt, type Scenario } from '../load.ts';
import { CONNECTIONS, DURATION, PAGE_HOST } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { getPage } from './unkept.ts';

/**
 * Replies posted through a conversation page's form (each a new message, answered 303) against
 * create_conversation, alternated in one run.
 */
export async function replies(product: Server) {
  const { html, cookie } = await getPage(product, '/c/pages-2');
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!csrf || !cookie) throw new Error('the reply scenario found no form on /c/pages-2');
  const reply = async (c: number) => {
    const result = await autocannon({
      url: product.base,
      connections: c,
      duration: DURATION,
      headers: {
        host: PAGE_HOST,
        cookie,
        origin: `https://${PAGE_HOST}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      requests: [{ method: 'POST', path: '/c/pages-2', body: `csrf=${encodeURIComponent(csrf)}&text=Bench+reply` }],
    });
    const redirected = result.statusCodeStats?.['303']?.count ?? 0;
    return { rps: result.requests.average, bad: result.errors + result.timeouts + result.requests.total - redirected };
  };
  const create: Scenario = {
    name: 'create',
    method: 'POST',
    path: () => '/api/v1/conversations/create_conversation',
    body: '{"title":"Bench create"}',
  };
  const rows: string[] = [];
  for (const c of CONNECTIONS) {
    resetPeak(product);
    const r1 = await reply(c);
    const c1 = await drive(product, create, c, DURATION);
    const c2 = await drive(product, create, c, DURATION);
    const r2 = await reply(c);
    const rps = { reply: (r1.rps + r2.rps) / 2, create: (c1.rps + c2.rps) / 2 };
    rows.push(
      `${String(c).padStart(5)} conns: reply ${fmt(rps.reply)} posts/s (not 303: ${r1.bad + r2.bad}), create_conversation ${fmt(rps.create)} req/s (non-2xx ${c1.non2xx + c2.non2xx}), reply/create x${(rps.reply / rps.create).toFixed(2)}; peak RSS ${peakRssMb(product)} MB`,
    );
  }
  console.log(`\nreplies posted through the page's form (product only):\n${rows.join('\n')}`);
}
