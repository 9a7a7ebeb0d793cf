import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { request, sleep, startLoad } from './support/load.ts';
import { stablePort, startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { cli, createAccount, type ServerProcess, startServer } from './support/server.ts';

/*
 * Webhook delivery under faults, against a receiver on 127.0.0.1: the receiver down while 1,000
 * conversations are created (every event arrives once it is back), a server process killed while a
 * delivery is in flight (delivered after restart), and four replicas delivering each event once.
 * The retry schedule is scaled down (WEBHOOK_RETRY_SCALE) so that minutes become seconds.
 */

const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_SCALE: '0.05',
  WEBHOOK_TIMEOUT_MS: '500',
};

let db: ThrowawayPostgres;
let token: string;
let port: number;
let receiver: Server | null = null;
/** webhook-id → how many times it arrived, and the payloads' conversation ids. */
const arrivals = new Map<string, number>();
const conversations = new Set<number>();
let onRequest: ((done: () => void) => void) | null = null;

function startReceiver(): Promise<void> {
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const finish = () => {
        arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
        conversations.add(JSON.parse(body).data.id);
        res.writeHead(204).end();
      };
      if (onRequest) onRequest(finish);
      else finish();
    });
  });
  return new Promise((resolve, reject) => {
    receiver?.once('error', reject);
    receiver?.listen(port, '127.0.0.1', () => resolve());
  });
}

const stopReceiver = () =>
  new Promise<void>((r) => {
    if (!receiver) return r();
    receiver.closeAllConnections();
    receiver.close(() => r());
    receiver = null;
  });

const until = async (what: () => boolean, ms: number, why: () => string) => {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${why()}`);
    await sleep(100);
  }
};

const create = (server: ServerProcess, title: string) =>
  request('create', `${server.baseUrl}/api/v1/conversations/create_conversation`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });

beforeAll(async () => {
  db = await startThrowawayPostgres();
  token = createAccount(db.url, 'hooks').token;
  // The receiver is stopped and started again on this port between tests.
  port = await stablePort();
  cli(
    db.url,
    [
      'webhook',
      'add',
      '--account',
      'hooks',
      '--url',
      `http://127.0.0.1:${port}/hook`,
      '--events',
      'conversation_created',
    ],
    WEBHOOK_ENV,
  );
});
afterAll(async () => {
  await stopReceiver();
  db?.destroy();
});

it('delivers all 1,000 events created while the receiver was down for 20 s, once it is back', async () => {
  arrivals.clear();
  conversations.clear();
  const server = await startServer(db.url, WEBHOOK_ENV);
  try {
    const down = performance.now();
    let n = 0;
    const load = startLoad(16, async () => create(server, `while down ${n++}`));
    await until(
      () => load.outcomes.filter((o) => o.status === 201).length >= 1000,
      60_000,
      () => 'creates',
    );
    await load.stop();
    const created = load.outcomes.filter((o) => o.status === 201).map((o) => o.body.id as number);
    await sleep(Math.max(0, 20_000 - (performance.now() - down)));
    expect(arrivals.size).toBe(0);
    await startReceiver();
    await until(
      () => created.every((id) => conversations.has(id)),
      90_000,
      () => `${conversations.size} of ${created.length} arrived`,
    );
    console.log(
      `webhooks: ${created.length} created while the receiver was down 20 s; all delivered ${Math.round((performance.now() - down) / 1000)} s after the outage began`,
    );
    expect(created.length).toBeGreaterThanOrEqual(1000);
  } finally {
    await server.kill();
    await stopReceiver();
  }
}, 180_000);

it('delivers an event whose server was killed mid-delivery, after a restart', async () => {
  arrivals.clear();
  conversations.clear();
  await startReceiver();
  let server = await startServer(db.url, WEBHOOK_ENV);
  let held = 0;
  // The first delivery is held open, and the server is killed while it waits for the answer.
  onRequest = (finish) => {
    held++;
    if (held === 1) void server.kill('SIGKILL');
    else finish();
  };
  try {
    const made = await create(server, 'killed mid-delivery');
    expect(made.status).toBe(201);
    await until(
      () => held >= 1,
      20_000,
      () => 'the first attempt',
    );
    await server.exited();
    server = await startServer(db.url, WEBHOOK_ENV);
    await until(
      () => conversations.has(made.body.id),
      60_000,
      () => 'redelivery after restart',
    );
    console.log(`webhooks: killed mid-delivery, delivered after restart (attempts seen: ${held})`);
  } finally {
    onRequest = null;
    await server.kill();
    await stopReceiver();
  }
}, 120_000);

it('four replicas deliver each event exactly once', async () => {
  arrivals.clear();
  conversations.clear();
  await startReceiver();
  const servers = await Promise.all(Array.from({ length: 4 }, () => startServer(db.url, WEBHOOK_ENV)));
  try {
    const made = await Promise.all(
      Array.from({ length: 400 }, (_, i) => create(servers[i % 4] as ServerProcess, `replica ${i}`)),
    );
    const ids = made.filter((o) => o.status === 201).map((o) => o.body.id as number);
    expect(ids).toHaveLength(400);
    await until(
      () => ids.every((id) => conversations.has(id)),
      60_000,
      () => `${conversations.size} of 400`,
    );
    await sleep(2_000);
    const counts = [...arrivals.values()];
    console.log(
      `webhooks: 4 replicas, ${ids.length} events, ${counts.length} distinct ids, most arrivals of one ${Math.max(...counts)}`,
    );
    expect(counts.every((c) => c === 1)).toBe(true);
  } finally {
    await Promise.all(servers.map((s) => s.kill()));
    await stopReceiver();
  }
}, 120_000);
