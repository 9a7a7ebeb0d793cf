import http from 'node:http';
import { cli } from '../data.ts';
import { drive, fmt, median, type Run, type Scenario } from '../load.ts';
import { CONNECTIONS, DURATION } from '../options.ts';
import { peakRssMb, resetPeak, type Server } from '../servers.ts';
import { aim } from '../targets.ts';

/**
 * create_conversation with one endpoint subscribed to conversation_created (each create writes its
 * event and a delivery in the same statement, and the server's worker delivers it to a receiver on
 * 127.0.0.1) against the same with none, alternated in one run (target: >= 0.9x).
 */
export async function webhooks(product: Server) {
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume().on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const address = receiver.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
  const env = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
  const create: Scenario = {
    name: 'create',
    method: 'POST',
    path: () => '/api/v1/conversations/create_conversation',
    body: '{"title":"Bench create"}',
  };
  const subscribe = () =>
    JSON.parse(
      cli(['webhook', 'add', '--account', 'bench', '--url', url, '--events', 'conversation_created', '--json'], env),
    ).id as number;
  const unsubscribe = (id: number) => cli(['webhook', 'remove', '--account', 'bench', '--id', String(id), '--json']);
  const rows: string[] = [];
  const ROUNDS = 4;
  let lowest = Number.POSITIVE_INFINITY;
  try {
    for (const c of CONNECTIONS) {
      resetPeak(product);
      // Four rounds, the order turned each round (without then with, then with then without), so
      // that the machine's drift and the table's growth between runs fall on both sides alike;
      // each subscription starts with an empty queue and is removed after its run.
      const without: Run[] = [];
      const withEndpoint: Run[] = [];
      const withOne = async () => {
        const id = subscribe();
        withEndpoint.push(await drive(product, create, c, DURATION));
        unsubscribe(id);
      };
      for (let round = 0; round < ROUNDS; round++) {
        if (round % 2 === 1) await withOne();
        without.push(await drive(product, create, c, DURATION));
        if (round % 2 === 0) await withOne();
      }
      const rps = { with: median(withEndpoint.map((r) => r.rps)), without: median(without.map((r) => r.rps)) };
      const ratios = withEndpoint.map((r, i) => (r.rps / (without[i] as Run).rps).toFixed(2)).join(', ');
      lowest = Math.min(lowest, rps.with / rps.without);
      rows.push(
        `${String(c).padStart(5)} conns: create with an endpoint ${fmt(rps.with)} req/s (non-2xx ${withEndpoint.reduce((n, r) => n + r.non2xx, 0)}), without ${fmt(rps.without)} req/s (medians of ${ROUNDS}), x${(rps.with / rps.without).toFixed(2)} (rounds: ${ratios}); peak RSS ${peakRssMb(product)} MB`,
      );
    }
  } finally {
    receiver.close();
  }
  console.log(
    `\ncreate with a webhook endpoint subscribed (product only; events received: ${received}):\n${rows.join('\n')}`,
  );
  aim('create with a webhook endpoint >= 0.90x without', `lowest x${lowest.toFixed(2)}`, lowest >= 0.9);
}
