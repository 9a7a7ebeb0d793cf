import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addWebhook, MikroWebhookStore, redeliverEvent, webhookAttempts } from '@convo/db';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { checkTarget, TargetRefused } from '../src/webhooks/target.ts';
import { startWebhookWorker, type WebhookWorker } from '../src/webhooks/worker.ts';
import { createJson, get, type Harness, makeAccount, openHarness, type TestAccount } from './support/harness.ts';
import { Visitor } from './support/site.ts';

/*
 * Webhooks against a real HTTP receiver on 127.0.0.1 (the tests allow http and private addresses,
 * as WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE do): what is sent, how it is signed, how
 * failures are retried, and what is refused.
 */

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let h: Harness;
let a: TestAccount;
let b: TestAccount;
let receiver: Server;
let url: string;
let received: Received[] = [];
/** The statuses the receiver answers with, in turn; 200 once they run out. */
let script: number[] = [];
let worker: WebhookWorker;

const until = async (what: () => boolean | Promise<boolean>, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
};

beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'hooked');
  b = await makeAccount(h, 'other');
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(script.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  worker = startWebhookWorker(new MikroWebhookStore(h.db.orm.em.fork()), {
    policy: { allowHttp: true, allowPrivate: true },
    logger: createLogger('silent'),
    intervalMs: 25,
    timeoutMs: 1_000,
    // The real schedule waits seconds to hours; here every retry is due at once.
    retryDelay: (attempts) => (attempts < 12 ? 0 : null),
  });
});
afterAll(async () => {
  await worker?.stop();
  await new Promise((r) => receiver?.close(r));
  await h?.close();
});
beforeEach(() => {
  received = [];
  script = [];
});

let secret: string;
describe('webhooks', () => {
  it('delivers conversation_created, signed by the Standard Webhooks scheme, with the conversation as get_conversation returns it', async () => {
    ({ secret } = await addWebhook(h.db.orm.em.fork(), a.id, url, ['conversation_created', 'message_created']));
    const created = await createJson(h, a.token, { title: 'Tell the CRM', slug: 'tell-the-crm' });
    expect(created.status).toBe(201);
    await until(() => received.length === 1);
    const [hit] = received;
    const payload = new Webhook(secret).verify(hit?.body ?? '', {
      'webhook-id': String(hit?.headers['webhook-id']),
      'webhook-timestamp': String(hit?.headers['webhook-timestamp']),
      'webhook-signature': String(hit?.headers['webhook-signature']),
    }) as { type: string; timestamp: string; data: unknown };
    expect(hit?.headers['webhook-id']).toMatch(/^evt_\d+$/);
    expect(hit?.headers['content-type']).toBe('application/json');
    expect(payload.type).toBe('conversation_created');
    expect(payload.data).toEqual((await get(h, a.token, 'get_conversation?slug=tell-the-crm')).body);
    // A tampered body does not verify.
    expect(() =>
      new Webhook(secret).verify(`${hit?.body} `, {
        'webhook-id': String(hit?.headers['webhook-id']),
        'webhook-timestamp': String(hit?.headers['webhook-timestamp']),
        'webhook-signature': String(hit?.headers['webhook-signature']),
      }),
    ).toThrow();
  });

  it('emits for a create made with an Idempotency-Key, once however often it is retried', async () => {
    const { call, REST, auth } = await import('./support/harness.ts');
    const send = () =>
      call(
        h,
        new Request(`${REST}/create_conversation`, {
          method: 'POST',
          headers: { ...auth(a.token), 'content-type': 'application/json', 'idempotency-key': 'hook-once' },
          body: JSON.stringify({ title: 'Keyed create' }),
        }),
      );
    const first = await send();
    const again = await send();
    expect([first.status, again.status]).toEqual([201, 201]);
    await until(() => received.length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]?.body ?? '{}').data.id).toBe(first.body.id);
  });

  it('retries a receiver that answers 500 three times: four attempts with one webhook-id', async () => {
    script = [500, 500, 500];
    await createJson(h, a.token, { title: 'Retried' });
    await until(() => received.length === 4);
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toHaveLength(4);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    const attempts = await webhookAttempts(h.db.orm.em.fork(), a.id, 1);
    expect(attempts.slice(0, 4).map((x) => x.status)).toEqual([200, 500, 500, 500]);
    expect(attempts[0]?.delivery).toBe('delivered');
  });

  it('delivers message_created for a reply posted on the page, with the conversation id and slug', async () => {
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`update account set host = 'https://hooked.example.com' where id = ${a.id}`);
    const created = await createJson(h, a.token, {
      title: 'Replied to',
      slug: 'replied-to',
      allow_anonymous_messages: true,
    });
    await until(() => received.length === 1);
    const v = new Visitor(h, 'https://hooked.example.com');
    expect((await v.reply('replied-to', { text: 'A reply for the bridge' })).status).toBe(303);
    await until(() => received.length === 2);
    const event = JSON.parse(received[1]?.body ?? '{}');
    const api = (await get(h, a.token, 'get_conversation?slug=replied-to')).body;
    expect(event.type).toBe('message_created');
    expect(event.data).toEqual({
      conversation: { id: created.body.id, slug: 'replied-to' },
      message: api.messages[0],
    });
  });

  it("emits nothing for a create that was refused, and nothing to another account's endpoint", async () => {
    const taken = await createJson(h, a.token, { title: 'Again', slug: 'tell-the-crm' });
    expect(taken.status).toBe(409);
    expect((await createJson(h, b.token, { title: 'Not for hooked' })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toEqual([]);
    const [row] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int as n from webhook_event where account_id = ${b.id}`);
    expect(row.n).toBe(0);
  });

  it('sends an event again on redeliver, with the same webhook-id', async () => {
    await createJson(h, a.token, { title: 'Once more' });
    await until(() => received.length === 1);
    // Redelivered at once, even while the first attempt is still being recorded: it stays queued.
    const id = Number(String(received[0]?.headers['webhook-id']).replace('evt_', ''));
    expect(await redeliverEvent(h.db.orm.em.fork(), a.id, id)).toBe(1);
    await until(() => received.length === 2);
    expect(received[1]?.headers['webhook-id']).toBe(`evt_${id}`);
    expect(received[1]?.body).toBe(received[0]?.body);
  });

  it('refuses targets that are not https or resolve to private addresses, at subscription and at delivery', async () => {
    const strict = { allowHttp: false, allowPrivate: false };
    await expect(checkTarget('http://hooks.example.com/x', strict)).rejects.toThrow(TargetRefused);
    for (const target of [
      'https://127.0.0.1/x',
      'https://10.1.2.3/x',
      'https://169.254.169.254/latest',
      'https://[::1]/x',
      'https://localhost/x',
    ]) {
      await expect(checkTarget(target, strict), target).rejects.toThrow(/non-public/);
    }
    // At delivery: a worker that may not reach private addresses records the refusal and retries later.
    const guarded = startWebhookWorker(new MikroWebhookStore(h.db.orm.em.fork()), {
      policy: { allowHttp: true, allowPrivate: false },
      logger: createLogger('silent'),
      intervalMs: 25,
      retryDelay: () => 3600,
    });
    await worker.stop();
    try {
      await createJson(h, a.token, { title: 'Never sent' });
      await until(
        async () => (await webhookAttempts(h.db.orm.em.fork(), a.id, 1))[0]?.error?.includes('non-public') ?? false,
      );
      expect(received).toEqual([]);
    } finally {
      await guarded.stop();
      worker = startWebhookWorker(new MikroWebhookStore(h.db.orm.em.fork()), {
        policy: { allowHttp: true, allowPrivate: true },
        logger: createLogger('silent'),
        intervalMs: 25,
        retryDelay: (attempts) => (attempts < 12 ? 0 : null),
      });
    }
  });

  it('writes the event in the create statement itself: still one insert statement per create', async () => {
    h.statements.length = 0;
    await createJson(h, b.token, { title: 'Unsubscribed account' });
    const creates = h.statements.filter((s) => s.includes('insert into "conversation"'));
    expect(creates).toHaveLength(1);
    expect(creates[0]).toContain('webhook_event');
  });
});
