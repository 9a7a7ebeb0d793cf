import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from './support/server-process.ts';

/*
 * The hostile client's shapes that only a real socket can send, against the real server process
 * in production mode: a form that used to freeze the event loop, bodies that stop or break
 * mid-upload, a reader that never reads, and requests Node's own parser refuses.
 */

const TOKEN = `cnv_${'h'.repeat(43)}`;
const METRICS_TOKEN = 'metrics-token-for-the-hostile-test';
const BODY_TIMEOUT_MS = 500;
const SEND_TIMEOUT_MS = 1_500;
/** 50 conversations × 4 messages × 100 KB: a 20 MB page, more than the kernel buffers on loopback. */
const MESSAGE = 'm'.repeat(100_000);
/*
 * Embedded PGlite runs inside the server process: its WebAssembly heap dominates and moves the
 * process's RSS, and its queries share the server's thread. The figures that judge the server
 * itself (time to refuse, memory under a burst) are held tightly on PostgreSQL, as CI runs them.
 */
const ON_POSTGRES = Boolean(process.env.DATABASE_URL);
/*
 * What "at once" means for a refusal and /healthz beside it: a parser that spent time per field
 * would take seconds on these forms. Not a speed target (the bench has those): 50 ms on
 * PostgreSQL failed once on a loaded machine at 55 ms, with nothing wrong.
 */
const FAST_MS = ON_POSTGRES ? 150 : 250;
if (!ON_POSTGRES) {
  console.warn(
    'hostile-node.test.ts: on embedded PGlite the time and memory bounds are loose; set DATABASE_URL for the tight ones',
  );
}

let server: RunningServer;
let dir: string;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'convo-hostile-'));
  const seed = join(dir, 'seed.json');
  const conversations = Array.from({ length: 50 }, (_, i) => ({
    title: `Big ${i}`,
    slug: `big-${i}`,
    messages: Array.from({ length: 4 }, () => ({ author: null, text: MESSAGE })),
  }));
  writeFileSync(
    seed,
    JSON.stringify({
      accounts: [
        {
          key: 'big',
          name: 'Big',
          host: 'https://big.example.com',
          tokens: [{ name: 't', token: TOKEN }],
          conversations,
        },
      ],
    }),
  );
  server = await startServer({
    seed,
    env: {
      NODE_ENV: 'production',
      BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
      SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
      METRICS_TOKEN,
      RATE_LIMIT: '0',
    },
  });
  port = Number(new URL(server.baseUrl).port);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Writes raw bytes on a fresh connection; resolves with everything the server sent until it closed. */
function raw(write: (socket: Socket) => void, o: { waitMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    }, o.waitMs ?? 10_000);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.on('connect', () => write(socket));
    socket.on('timeout', reject);
  });
}

/** What docs/operating.md's reliability table quotes; printed at the end of the run. */
const figures: string[] = [];
afterAll(() => console.log(`hostile client: ${figures.join('; ')}`));

/** The server process's resident memory now, in MB (its peak would be PGlite's start-up, not the burst). */
const rssMb = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1]) / 1024;

/**
 * Whether the server process still has open the socket of the client's connection from
 * `clientPort` (Linux: its descriptors' socket inodes, looked up in /proc/net/tcp).
 */
function serverHolds(clientPort: number): boolean {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  const row = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((f) => f[1]?.endsWith(`:${hex(port)}`) && f[2]?.endsWith(`:${hex(clientPort)}`));
  const inode = row?.[9];
  if (!inode || inode === '0') return false;
  const dir = `/proc/${server.pid}/fd`;
  return readdirSync(dir).some((fd) => {
    try {
      return readlinkSync(`${dir}/${fd}`) === `socket:[${inode}]`;
    } catch {
      return false;
    }
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

async function metrics(): Promise<string> {
  const res = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return res.text();
}

describe('against the running server', () => {
  it('refuses a 64 KB form of 16,000 fields in milliseconds, with or without a token, while /healthz stays fast', async () => {
    const form = Array.from({ length: 16_000 }, (_, i) => String.fromCharCode(97 + (i % 26)))
      .join('&')
      .padEnd(64 * 1024 - 1, 'x');
    const send = (authorization?: string) =>
      fetch(`${server.baseUrl}/api/v1/conversations/create_conversation`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(authorization ? { authorization } : {}),
        },
        body: form,
      });
    for (const [authorization, status] of [
      [undefined, 401],
      [`Bearer ${TOKEN}`, 413],
    ] as const) {
      // Warm, then measure: the first request on a fresh connection pays for the connection.
      await (await send(authorization)).text();
      const started = performance.now();
      const [refused, health] = await Promise.all([
        send(authorization).then(async (r) => ({
          status: r.status,
          body: await r.json(),
          ms: performance.now() - started,
        })),
        fetch(`${server.baseUrl}/healthz`).then(async (r) => ({
          status: r.status,
          ms: performance.now() - started,
          _: await r.text(),
        })),
      ]);
      expect(refused.status).toBe(status);
      expect(refused.ms).toBeLessThan(FAST_MS);
      figures.push(
        `64 KB form of 16,000 fields: ${status} in ${refused.ms.toFixed(1)} ms (/healthz ${health.ms.toFixed(1)} ms)`,
      );
      expect(health.status).toBe(200);
      expect(health.ms).toBeLessThan(FAST_MS);
    }
  });

  it('refuses a tRPC body whose Content-Length is over the limit before it is sent', async () => {
    const answer = await raw((s) =>
      s.write(
        'POST /trpc/conversations.createConversation HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n' +
          `authorization: Bearer ${TOKEN}\r\ncontent-length: 400000000\r\n\r\n{`,
      ),
    );
    expect(statusOf(answer)).toBe(413);
    expect(bodyOf(answer).error.data.appCode).toBe('body_too_large');
  });

  it('cuts a chunked tRPC body off at the limit', async () => {
    const answer = await raw((s) => {
      s.write(
        'POST /trpc/conversations.createConversation HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n' +
          `authorization: Bearer ${TOKEN}\r\ntransfer-encoding: chunked\r\n\r\n`,
      );
      const chunk = 'x'.repeat(16 * 1024);
      for (let i = 0; i < 10; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    });
    expect(statusOf(answer)).toBe(413);
  });

  it('holds memory under a burst of oversized bodies: 8 declared 400 MB and 8 chunked 50 MB uploads at once', async () => {
    const before = rssMb();
    let highest = before;
    const sampler = setInterval(() => {
      highest = Math.max(highest, rssMb());
    }, 10);
    const declared = Array.from({ length: 8 }, () =>
      raw((s) =>
        s.write(
          'POST /trpc/conversations.createConversation HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n' +
            `authorization: Bearer ${TOKEN}\r\ncontent-length: 400000000\r\n\r\n`,
        ),
      ),
    );
    const chunk = 'x'.repeat(64 * 1024);
    const chunked = Array.from({ length: 8 }, (_, i) =>
      raw((s) => {
        const path =
          i % 2 === 0 ? '/trpc/conversations.createConversation' : '/api/v1/conversations/create_conversation';
        s.write(
          `POST ${path} HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n` +
            `authorization: Bearer ${TOKEN}\r\ntransfer-encoding: chunked\r\n\r\n`,
        );
        let sent = 0;
        const more = () => {
          while (sent < 50 * 1024 * 1024 && !s.destroyed) {
            sent += chunk.length;
            if (!s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)) return void s.once('drain', more);
          }
        };
        more();
      }),
    );
    const answers = await Promise.all([...declared, ...chunked]);
    clearInterval(sampler);
    expect(answers.map(statusOf)).toEqual(Array(16).fill(413));
    figures.push(
      `RSS under 8 × 400 MB declared and 8 × 50 MB chunked bodies at once: ${before.toFixed(0)} MB before, ` +
        `${highest.toFixed(0)} MB at most`,
    );
    expect(highest - before).toBeLessThan(ON_POSTGRES ? 150 : 400);
  });

  it('answers a body shorter than its Content-Length with 408 after the body timeout, even without a token', async () => {
    for (const authorization of [`authorization: Bearer ${TOKEN}\r\n`, '']) {
      const started = performance.now();
      const answer = await raw((s) =>
        s.write(
          'POST /api/v1/conversations/create_conversation HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n' +
            `${authorization}content-length: 100\r\n\r\n{"title":`,
        ),
      );
      const took = performance.now() - started;
      if (authorization) {
        expect(statusOf(answer)).toBe(408);
        expect(bodyOf(answer).code).toBe('request_timeout');
        expect(answer.toLowerCase()).toContain('connection: close');
        expect(took).toBeLessThan(BODY_TIMEOUT_MS + 2_000);
      } else {
        // Without a token nothing is read: 401 at once.
        expect(statusOf(answer)).toBe(401);
        expect(took).toBeLessThan(1_000);
      }
    }
  });

  it('counts an upload the client drops as 499, never as a 503', async () => {
    await raw(
      (s) => {
        s.write(
          'POST /api/v1/conversations/create_conversation HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n' +
            `authorization: Bearer ${TOKEN}\r\ncontent-length: 1000\r\n\r\n{"title":`,
        );
        setTimeout(() => s.resetAndDestroy(), 100);
      },
      { waitMs: 1_000 },
    );
    await new Promise((r) => setTimeout(r, 200));
    const text = await metrics();
    expect(text).toMatch(/http_requests_total\{operation="create_conversation",method="POST",status="499"\} 1/);
    expect(text).not.toMatch(/status="503"/);
  });

  it('cuts off a reader that does not take its answer within the send timeout', async () => {
    const asked = performance.now();
    const page = await fetch(`${server.baseUrl}/api/v1/conversations/get_conversations`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const full = (await page.arrayBuffer()).byteLength;
    expect(full).toBeGreaterThan(19_000_000);
    // The send timeout runs from the answer's first bytes: on a busy machine the page takes a while
    // to make, so the reader waits past the timeout from then (twice this page's time, to be sure).
    const making = 2 * (performance.now() - asked);

    let received = 0;
    const closed = await new Promise<number>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          `GET /api/v1/conversations/get_conversations HTTP/1.1\r\nHost: x\r\nauthorization: Bearer ${TOKEN}\r\n\r\n`,
        );
        socket.pause();
        // Read nothing for longer than the send timeout, then take what is left.
        setTimeout(() => socket.resume(), making + SEND_TIMEOUT_MS + 1_500);
      });
      const started = performance.now();
      socket.on('data', (c) => {
        received += c.length;
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(performance.now() - started));
    });
    expect(received).toBeLessThan(full);
    expect(closed).toBeLessThan(making + SEND_TIMEOUT_MS + 10_000);
  }, 45_000);

  it("gives Node's own refusals the JSON error body: headers too large (431), not HTTP (400)", async () => {
    const big = await raw((s) => s.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(statusOf(big)).toBe(431);
    expect(bodyOf(big)).toEqual({ error: 'the request headers are too large', code: 'header_too_large' });
    const garbage = await raw((s) => s.write('NOT HTTP AT ALL\r\n\r\n'));
    expect(statusOf(garbage)).toBe(400);
    expect(bodyOf(garbage)).toEqual({ error: 'the request is not valid HTTP', code: 'bad_request' });
  });

  it('lets go of a refused connection whose client keeps its own side open', async () => {
    // After its 400 the server has ended its side; a client that never ends its own (and sends
    // nothing more) must not hold the server's socket, and a stopping server's close, forever.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => undefined);
    const ended = new Promise<void>((resolve) => socket.on('end', () => resolve()));
    socket.resume();
    socket.on('connect', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
    await ended;
    const clientPort = socket.localPort ?? 0;
    const heldAtFirst = serverHolds(clientPort);
    const started = performance.now();
    while (serverHolds(clientPort) && performance.now() - started < 8_000) await new Promise((r) => setTimeout(r, 100));
    const heldFor = performance.now() - started;
    socket.destroy();
    expect(heldAtFirst).toBe(true);
    expect(heldFor).toBeLessThan(5_000);
  });

  it('closes the connection after a refusal that left the body unread: a keep-alive client goes on', async () => {
    const { Agent, request } = await import('undici');
    const agent = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
    try {
      const batch = () =>
        request(
          `${server.baseUrl}/trpc/conversations.getConversations,account.getAccount?batch=1&input=${encodeURIComponent('{}')}`,
          {
            dispatcher: agent,
            headers: { authorization: `Bearer ${TOKEN}` },
          },
        );
      const refusals = [
        // A 2 MB create: refused by its declared length, the body never read.
        () =>
          request(`${server.baseUrl}/trpc/conversations.createConversation`, {
            dispatcher: agent,
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ title: 'x'.repeat(2_000_000) }),
          }),
        // The same without a token: refused before the body is read.
        () =>
          request(`${server.baseUrl}/trpc/conversations.createConversation`, {
            dispatcher: agent,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ title: 'y'.repeat(100_000) }),
          }),
        // A 2 MB create sent without a length (chunked, as http.request does after write()),
        // cut off at the limit with most of it still on the way.
        () =>
          request(`${server.baseUrl}/trpc/conversations.createConversation`, {
            dispatcher: agent,
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: Readable.from(
              (async function* () {
                yield new TextEncoder().encode(`{"title":"${'z'.repeat(2_000_000)}"}`);
              })(),
            ),
          }),
        // A body that arrives slowly and is cut off at the limit.
        () =>
          request(`${server.baseUrl}/api/v1/conversations/create_conversation`, {
            dispatcher: agent,
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: Readable.from(
              (async function* () {
                for (let i = 0; i < 20; i++) {
                  yield new Uint8Array(10_000).fill(32);
                  await new Promise((r) => setTimeout(r, 10));
                }
              })(),
            ),
          }),
      ];
      for (const refuse of refusals) {
        const refused = await refuse();
        expect(refused.statusCode).toBeGreaterThanOrEqual(400);
        // Unread, or cut off at the limit with the rest still coming: the connection is closed.
        expect(refused.headers.connection).toBe('close');
        await refused.body.dump();
        const next = await batch();
        expect(next.statusCode).toBe(200);
        await next.body.dump();
      }
    } finally {
      await agent.close();
    }
  });
});
