import { drive, fmt } from '../load.ts';
import { CONNECTIONS, DURATION, PAGE_HOST, PAGE_MESSAGES, PAGE_TOKEN } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';
import { getPage } from './unkept.ts';

/**
 * The HTML page of a conversation with PAGE_MESSAGES messages against get_conversation on the same
 * conversation, alternated in one run (target: the page at >= 0.8x), and the API's list page beside them.
 */
export async function pages(product: Server) {
  const { status, html } = await getPage(product, '/c/pages-1');
  if (status !== 200 || (html.match(/class="message"/g) ?? []).length !== PAGE_MESSAGES) {
    throw new Error(`the page scenario's page is wrong: ${status} ${html.slice(0, 200)}`);
  }
  const rows: string[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (const c of CONNECTIONS) {
    resetPeak(product);
    const api = { name: 'api', path: () => '/api/v1/conversations/get_conversation?slug=pages-1' };
    const htmlPage = { name: 'page', path: () => '/c/pages-1' };
    const list = { name: 'list', path: () => '/api/v1/conversations/get_conversations?page=1' };
    const a1 = await drive(product, api, c, DURATION, PAGE_TOKEN);
    const p1 = await drive(product, htmlPage, c, DURATION, PAGE_TOKEN, PAGE_HOST);
    const p2 = await drive(product, htmlPage, c, DURATION, PAGE_TOKEN, PAGE_HOST);
    const a2 = await drive(product, api, c, DURATION, PAGE_TOKEN);
    const l = await drive(product, list, c, DURATION);
    const rps = { api: (a1.rps + a2.rps) / 2, page: (p1.rps + p2.rps) / 2 };
    worst = Math.min(worst, rps.page / rps.api);
    rows.push(
      `${String(c).padStart(5)} conns: page ${fmt(rps.page)} req/s (p99 ${Math.max(p1.p99, p2.p99)} ms, non-2xx ${p1.non2xx + p2.non2xx}), ` +
        `get_conversation ${fmt(rps.api)} req/s (non-2xx ${a1.non2xx + a2.non2xx}), page/api x${(rps.page / rps.api).toFixed(2)}; ` +
        `get_conversations page 1 ${fmt(l.rps)} req/s; peak RSS ${peakRssMb(product)} MB`,
    );
  }
  console.log(`\nconversation page, ${PAGE_MESSAGES} messages (product only):\n${rows.join('\n')}`);
  aim('conversation page (50 messages) >= 0.80x get_conversation on it', `lowest x${worst.toFixed(2)}`, worst >= 0.8);
}
