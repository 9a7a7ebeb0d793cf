import { drive, fmt } from '../load.ts';
import { CONNECTIONS, DURATION } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { CREATE, getPage, postForm } from './unkept.ts';

/**
 * Replies posted through a conversation page's form (each a new message, answered 303) against
 * create_conversation, alternated in one run.
 */
export async function replies(product: Server) {
  const { html, cookie } = await getPage(product, '/c/pages-2');
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!csrf || !cookie) throw new Error('the reply scenario found no form on /c/pages-2');
  const reply = (c: number) =>
    postForm(product, '/c/pages-2', { cookie, body: `csrf=${encodeURIComponent(csrf)}&text=Bench+reply` }, c);
  const rows: string[] = [];
  for (const c of CONNECTIONS) {
    resetPeak(product);
    const r1 = await reply(c);
    const c1 = await drive(product, CREATE, c, DURATION);
    const c2 = await drive(product, CREATE, c, DURATION);
    const r2 = await reply(c);
    const rps = { reply: (r1.rps + r2.rps) / 2, create: (c1.rps + c2.rps) / 2 };
    rows.push(
      `${String(c).padStart(5)} conns: reply ${fmt(rps.reply)} posts/s (not 303: ${r1.bad + r2.bad}), create_conversation ${fmt(rps.create)} req/s (non-2xx ${c1.non2xx + c2.non2xx}), reply/create x${(rps.reply / rps.create).toFixed(2)}; peak RSS ${peakRssMb(product)} MB`,
    );
  }
  console.log(`\nreplies posted through the page's form (product only):\n${rows.join('\n')}`);
}
