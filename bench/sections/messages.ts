import { pick } from '../correctness.ts';
import { drive, fmt, type Scenario } from '../load.ts';
import { CONNECTIONS, DURATION, TOKEN } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';
import { CREATE } from './unkept.ts';

/**
 * The messages resource (issue 41) beside the conversations' own yardsticks, alternated in one
 * run: get_messages page 1 (the account's 50 newest messages) against get_conversations page 1,
 * both read from the database (the product keeping no page), and create_message against
 * create_conversation (target: >= 0.8x each).
 */
export async function messages(product: Server, unkept: Server) {
  // Messages go into the 50 latest conversations, as an integration's do into many.
  const found = await fetch(`${product.base}/api/v1/conversations/get_conversations?page=1`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const ids = ((await found.json()) as { conversations?: { id: number }[] }).conversations?.map((c) => c.id) ?? [];
  if (ids.length === 0) throw new Error('the messages section found no conversations');
  const listMessages: Scenario = { name: 'get_messages page 1', path: () => '/api/v1/messages/get_messages?page=1' };
  const listConversations: Scenario = {
    name: 'get_conversations page 1',
    path: () => '/api/v1/conversations/get_conversations?page=1',
  };
  const createMessage: Scenario = {
    name: 'create_message',
    method: 'POST',
    path: () => '/api/v1/messages/create_message',
    body: () => JSON.stringify({ conversation_id: ids[pick(ids.length) - 1], text: 'Bench message' }),
  };
  const rows: string[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (const c of CONNECTIONS) {
    for (const [mine, theirs, server] of [
      [listMessages, listConversations, unkept],
      [createMessage, CREATE, product],
    ] as const) {
      resetPeak(server);
      const t1 = await drive(server, theirs, c, DURATION);
      const m1 = await drive(server, mine, c, DURATION);
      const m2 = await drive(server, mine, c, DURATION);
      const t2 = await drive(server, theirs, c, DURATION);
      const rps = { mine: (m1.rps + m2.rps) / 2, theirs: (t1.rps + t2.rps) / 2 };
      worst = Math.min(worst, rps.mine / rps.theirs);
      rows.push(
        `${String(c).padStart(5)} conns: ${mine.name} ${fmt(rps.mine)} req/s (p99 ${Math.max(m1.p99, m2.p99)} ms, ` +
          `non-2xx ${m1.non2xx + m2.non2xx}, CPU ${((m1.cpuMs + m2.cpuMs) / 2).toFixed(2)} ms), ${theirs.name} ` +
          `${fmt(rps.theirs)} req/s (CPU ${((t1.cpuMs + t2.cpuMs) / 2).toFixed(2)} ms), x${(rps.mine / rps.theirs).toFixed(2)}; ` +
          `peak RSS ${peakRssMb(server)} MB`,
      );
    }
  }
  console.log(`\nthe messages resource (product only; the reads keep no page):\n${rows.join('\n')}`);
  aim(
    'get_messages page 1 and create_message >= 0.80x get_conversations page 1 and create_conversation',
    `lowest x${worst.toFixed(2)}`,
    worst >= 0.8,
  );
}
