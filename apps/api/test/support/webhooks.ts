import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PgWebhookDeliveryStore } from '@convo/db';
import { expect } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { startWebhookWorker } from '../../src/workers/webhooks.ts';
import { auth, BASE, call, type Harness } from './harness.ts';

/** A delivery as the receiver got it. */
export interface Delivery {
  body: string;
  headers: Record<string, unknown>;
}

/**
 * A receiver on 127.0.0.1, subscribed with `token` to `events`, and the worker that delivers to
 * it (retrying at once): what arrived, the endpoint's signing secret, and how to stop both.
 */
export async function openReceiver(h: Harness, token: string, events: readonly string[]) {
  const received: Delivery[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const hook = await call(
    h,
    new Request(`${BASE}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...auth(token), 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, events }),
    }),
  );
  expect(hook.status).toBe(201);
  const worker = startWebhookWorker(new PgWebhookDeliveryStore(h.db.orm.em.fork()), {
    policy: { allowHttp: true, allowPrivate: true },
    logger: createLogger('silent'),
    intervalMs: 25,
    timeoutMs: 5_000,
    retryDelay: () => 0,
  });
  return {
    received,
    secret: hook.body.secret as string,
    async close() {
      await worker.stop();
      await new Promise((r) => server.close(r));
    },
  };
}
