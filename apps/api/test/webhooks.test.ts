import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadSeed, PgWebhookDeliveryStore, redeliverEvent, webhookAttempts } from '@convo/db';
import { MAX_WEBHOOK_ENDPOINTS } from '@convo/domain';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import {
  checkTarget,
  isPublicAddress,
  NON_PUBLIC_RANGES,
  TargetRefused,
  webhookTargets,
} from '../src/workers/webhook-target.ts';
import { startWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from '../src/workers/webhooks.ts';
import {
  apiCall,
  auth,
  BASE,
  type Call,
  call,
  createJson,
  get,
  type Harness,
  makeAccount,
  openHarness,
  secondApp,
  type TestAccount,
  until,
} from './support/harness.ts';
import { Visitor } from './support/site.ts';

/*
 * Webhooks against a real HTTP receiver on 127.0.0.1 (the tests allow http and private addresses,
 * as WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE do): what is sent, how it is signed, how
 * failures are retried, and what is refused.
 */

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The path and query the delivery was posted to (which endpoint it was for). */
  path: string;
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

/**
 * A worker as the tests run it: http and private targets allowed, polling every 25 ms, and every
 * retry due at once (the real schedule waits seconds to hours). `o` changes any of that.
 */
const testWorker = (o: Partial<WebhookWorkerOptions> = {}) =>
  startWebhookWorker(new PgWebhookDeliveryStore(h.db.orm.em.fork()), {
    policy: { allowHttp: true, allowPrivate: true },
    logger: createLogger('silent'),
    intervalMs: 25,
    timeoutMs: 1_000,
    retryDelay: (attempts) => (attempts < 12 ? 0 : null),
    ...o,
  });

beforeAll(async () => {
  h = await openHarness({ services: { webhookTargets: { allowHttp: true, allowPrivate: true } } });
  a = await makeAccount(h, 'hooked');
  b = await makeAccount(h, 'other');
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body, path: req.url ?? '' });
      res.writeHead(script.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  worker = testWorker();
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

const HOOKS = `${BASE}/api/v1/webhooks`;

const subscribe = (token: string, body: unknown, app = h.app) =>
  call(
    { ...h, app },
    new Request(HOOKS, {
      method: 'POST',
      headers: { ...auth(token), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
const listHooks = (token: string) => call(h, new Request(HOOKS, { headers: auth(token) }));
const deleteHook = (token: string, id: number | string) =>
  call(h, new Request(`${HOOKS}/${id}`, { method: 'DELETE', headers: auth(token) }));

/** A delivery's body as its receiver reads it: verified by the Standard Webhooks scheme under `key`. */
const verified = (key: string, hit: { body: string; headers: Record<string, unknown> } | undefined) =>
  new Webhook(key).verify(hit?.body ?? '', {
    'webhook-id': String(hit?.headers['webhook-id']),
    'webhook-timestamp': String(hit?.headers['webhook-timestamp']),
    'webhook-signature': String(hit?.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: any };

let secret: string;
describe('webhooks', () => {
  it('delivers conversation_created, signed by the Standard Webhooks scheme, with the conversation as get_conversation returns it', async () => {
    const subscribed = await subscribe(a.token, { url, events: ['conversation_created', 'message_created'] });
    expect(subscribed.status).toBe(201);
    secret = subscribed.body.secret;
    const created = await createJson(h, a.token, { title: 'Tell the CRM', slug: 'tell-the-crm' });
    expect(created.status).toBe(201);
    await until(() => received.length === 1);
    const [hit] = received;
    const payload = verified(secret, hit);
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

  it('delivers conversation_updated with the conversation as it is after update_conversation', async () => {
    const made = await subscribe(a.token, { url: `${url}?updated`, events: ['conversation_updated'] });
    expect(made.status).toBe(201);
    const created = await createJson(h, a.token, { title: 'Before', slug: 'renamed-later' });
    const updated = await call(
      h,
      new Request(`${BASE}/api/v1/conversations/update_conversation`, {
        method: 'POST',
        headers: { ...auth(a.token), 'content-type': 'application/json' },
        body: JSON.stringify({ conversation_id: created.body.id, title: 'After', anyone_can_post: false }),
      }),
    );
    expect(updated.status).toBe(200);
    const toIt = () => received.filter((r) => r.path.endsWith('?updated'));
    await until(() => toIt().length === 1);
    const [hit] = toIt();
    const payload = verified(made.body.secret, hit);
    expect(payload.type).toBe('conversation_updated');
    expect(payload.data).toEqual((await get(h, a.token, 'get_conversation?slug=renamed-later')).body);
    expect(payload.data).toMatchObject({ title: 'After', anyone_can_post: false });
    // The create went to the endpoint that asked for creates only.
    await new Promise((r) => setTimeout(r, 300));
    expect(toIt()).toHaveLength(1);
    expect((await deleteHook(a.token, made.body.id)).status).toBe(200);
  });

  it('delivers conversation_deleted with the id of the conversation delete_conversation deleted', async () => {
    const made = await subscribe(a.token, { url: `${url}?deleted`, events: ['conversation_deleted'] });
    expect(made.status).toBe(201);
    const created = await createJson(h, a.token, { title: 'Soon gone', slug: 'deleted-later' });
    const deleted = await call(
      h,
      new Request(`${BASE}/api/v1/conversations/delete_conversation`, {
        method: 'POST',
        headers: { ...auth(a.token), 'content-type': 'application/json' },
        body: JSON.stringify({ conversation_id: created.body.id }),
      }),
    );
    expect(deleted.status).toBe(200);
    const toIt = () => received.filter((r) => r.path.endsWith('?deleted'));
    await until(() => toIt().length === 1);
    const [hit] = toIt();
    const payload = verified(made.body.secret, hit);
    expect(payload).toMatchObject({ type: 'conversation_deleted', data: { conversation: { id: created.body.id } } });
    expect((await deleteHook(a.token, made.body.id)).status).toBe(200);
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
      internal: false,
      parent_message_id: null,
      at_seconds: null,
    });
  });

  it('marks an internal note’s message_created internal, a message the spec’d operations never list', async () => {
    const created = await createJson(h, a.token, { title: 'Noted', slug: 'noted' });
    await until(() => received.length === 1);
    const note = await apiCall(h, 'POST', '/messages/create_message', auth(a.token), {
      conversation_id: created.body.id,
      text: 'For the team only',
      internal: true,
    });
    expect([note.status, note.body.internal]).toEqual([201, true]);
    await until(() => received.length === 2);
    const event = JSON.parse(received[1]?.body ?? '{}');
    expect(event).toMatchObject({
      type: 'message_created',
      data: { conversation: { id: created.body.id, slug: 'noted' }, internal: true, message: { id: note.body.id } },
    });
    expect(event.data.message.text).toBe('For the team only');
    expect((await get(h, a.token, 'get_conversation?slug=noted')).body.messages).toEqual([]);
  });

  it('delivers message_created for a recording with the media fields the API shows', async () => {
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`update account set host = 'https://hooked.example.com' where id = ${a.id}`);
    await createJson(h, a.token, { title: 'Recorded to', slug: 'recorded-to', allow_anonymous_messages: true });
    await until(() => received.length === 1);
    const bytes = new Uint8Array(readFileSync(new URL('./fixtures/media/audio-3s.ogg', import.meta.url)));
    const v = new Visitor(h, 'https://hooked.example.com');
    const posted = await v.replyWithRecording('recorded-to', {}, { name: 'a.ogg', type: 'audio/ogg', bytes });
    expect(posted.status).toBe(303);
    await until(() => received.length === 2);
    const event = JSON.parse(received[1]?.body ?? '{}');
    const api = (await get(h, a.token, 'get_conversation?slug=recorded-to')).body;
    expect(event.data.message).toEqual(api.messages[0]);
    expect(event.data.message).toMatchObject({
      message_type: 'audio',
      recorded_duration_seconds: 3,
      download_media_url: expect.stringMatching(/^https:\/\/hooked\.example\.com\/media\/[^/]+\/\d+$/),
    });
  });

  it('carries a thread reply’s moment of its recording (at_seconds) in message_created', async () => {
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`update account set host = 'https://hooked.example.com' where id = ${a.id}`);
    await createJson(h, a.token, { title: 'Moments', slug: 'moments', allow_anonymous_messages: true });
    await until(() => received.length === 1);
    const bytes = new Uint8Array(readFileSync(new URL('./fixtures/media/audio-3s.ogg', import.meta.url)));
    const posted = await new Visitor(h, 'https://hooked.example.com').replyWithRecording(
      'moments',
      {},
      { name: 'a.ogg', type: 'audio/ogg', bytes },
    );
    const root = Number(/#message-(\d+)$/.exec(posted.headers.get('location') ?? '')?.[1]);
    await until(() => received.length === 2);
    const conversation = JSON.parse(received[0]?.body ?? '{}').data.id;
    const reply = await apiCall(h, 'POST', '/messages/create_message', auth(a.token), {
      conversation_id: conversation,
      text: 'Here',
      parent_message_id: root,
      at_seconds: 2,
    });
    expect(reply.status).toBe(201);
    await until(() => received.length === 3);
    const event = JSON.parse(received[2]?.body ?? '{}');
    expect(event.data).toMatchObject({ parent_message_id: root, at_seconds: 2, message: { id: reply.body.id } });
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

  it('still delivers, a batch a second, while the API keeps every database connection busy', async () => {
    await worker.stop();
    const yielding = testWorker({ busy: async () => true });
    try {
      const started = Date.now();
      await createJson(h, a.token, { title: 'Under load' });
      await until(() => received.length === 1, 5_000);
      // It waited for the API (up to a second), and then went ahead.
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      await yielding.stop();
      worker = testWorker();
    }
  });

  it('disables an endpoint that has failed for three days: shown as disabled, its queue failed, sent nothing more', async () => {
    const made = await subscribe(b.token, { url: `${url}?failing`, events: ['conversation_created'] });
    const db = h.db.orm.em.fork().getConnection();
    await db.execute(`update webhook_endpoint set failing_since = now() - interval '3 days 1 minute' where id = ?`, [
      made.body.id,
    ]);
    script = [500, 500];
    await createJson(h, b.token, { title: 'The last one it is sent' });
    await createJson(h, b.token, { title: 'Queued behind it' });
    await until(async () => (await listHooks(b.token)).body.webhooks[0]?.status === 'disabled');
    const [hook] = (await listHooks(b.token)).body.webhooks;
    expect(hook).toMatchObject({ id: made.body.id, status: 'disabled', pending_deliveries: 0 });
    expect(hook.disabled_at).not.toBeNull();
    const sentBefore = received.length;
    await createJson(h, b.token, { title: 'Never announced' });
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toHaveLength(sentBefore);
    const [row] = await db.execute(
      `select count(*)::int as n from webhook_delivery where endpoint_id = ? and status = 'failed'`,
      [made.body.id],
    );
    expect(row.n).toBeGreaterThanOrEqual(1);
    expect((await deleteHook(b.token, made.body.id)).status).toBe(200);
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

  it('forgets events past their retention once every delivery is done, with their deliveries and attempts', async () => {
    const c = await makeAccount(h, 'retained');
    await subscribe(c.token, { url: `${url}?retained`, events: ['conversation_created'] });
    for (const title of ['Old and delivered', 'Old and pending', 'Recent']) await createJson(h, c.token, { title });
    await until(() => received.filter((r) => r.path.endsWith('?retained')).length === 3);
    const db = h.db.orm.em.fork().getConnection();
    const events = async (): Promise<string[]> =>
      (
        await db.execute(
          `select e.id, c.title, (select count(*)::int from webhook_attempt t join webhook_delivery d on d.id = t.delivery_id
                                   where d.event_id = e.id) as attempts
           from webhook_event e join conversation c on c.id = e.conversation_id where e.account_id = ? order by e.id`,
          [c.id],
        )
      ).map((r: { title: string; attempts: number }) => `${r.title}: ${r.attempts}`);
    await until(async () => (await events()).every((e: string) => e.endsWith(': 1')));
    await db.execute(
      `update webhook_event e set created_at = now() - interval '31 days' from conversation c
       where c.id = e.conversation_id and e.account_id = ? and c.title like 'Old%'`,
      [c.id],
    );
    // One old event still has a delivery waiting for its next attempt.
    await db.execute(
      `update webhook_delivery d set status = 'pending', next_attempt_at = now() + interval '1 day'
       from webhook_event e join conversation c on c.id = e.conversation_id
       where d.event_id = e.id and e.account_id = ? and c.title = 'Old and pending'`,
      [c.id],
    );
    const store = new PgWebhookDeliveryStore(h.db.orm.em.fork());
    expect(await store.purgeHistory(30)).toBe(1);
    expect(await events()).toEqual(['Old and pending: 1', 'Recent: 1']);
    const [orphans] = await db.execute(
      `select count(*)::int as n from webhook_attempt t where not exists (select 1 from webhook_delivery d where d.id = t.delivery_id)`,
    );
    expect(orphans.n).toBe(0);
    expect(await store.purgeHistory(30)).toBe(0);
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
    const guarded = testWorker({ policy: { allowHttp: true, allowPrivate: false }, retryDelay: () => 3600 });
    await worker.stop();
    try {
      await createJson(h, a.token, { title: 'Never sent' });
      await until(
        async () => (await webhookAttempts(h.db.orm.em.fork(), a.id, 1))[0]?.error?.includes('non-public') ?? false,
      );
      expect(received).toEqual([]);
    } finally {
      await guarded.stop();
      worker = testWorker();
    }
  });

  it('refuses every special-purpose range the IANA registries list, in any spelling, from one table', async () => {
    const strict = { allowHttp: false, allowPrivate: false };
    for (const target of [
      'https://[::127.0.0.1]/',
      'https://[::a9fe:a9fe]/latest/meta-data/',
      'https://[::ffff:10.0.0.1]/',
    ]) {
      await expect(checkTarget(target, strict), target).rejects.toThrow(/non-public/);
    }
    for (const [cidr, what] of NON_PUBLIC_RANGES) {
      const [base, bits] = ipaddr.parseCIDR(cidr);
      // The range's first address, and its last.
      const bytes = base.toByteArray();
      const last = bytes.map((b, i) => {
        const keep = Math.max(0, Math.min(8, bits - i * 8));
        return b | (0xff >> keep);
      });
      for (const address of [base.toString(), ipaddr.fromByteArray(last).toString()]) {
        expect(isPublicAddress(address), `${address} (${cidr}, ${what})`).toBe(false);
        const host = base.kind() === 'ipv6' ? `[${address}]` : address;
        await expect(checkTarget(`https://${host}/`, strict), address).rejects.toThrow(/non-public/);
      }
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '192.0.1.255']) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it('announces what the seed loader loads only when the operator asks (--emit-events), in order', async () => {
    const seed = (key: string, emitEvents: boolean) =>
      loadSeed(
        h.db.orm.em.fork(),
        {
          accounts: [
            {
              key,
              name: key,
              host: `https://${key}.example.com`,
              webhooks: [{ url: `${url}?${key}` }],
              conversations: [
                { slug: 'first', messages: [{ text: 'one' }, { text: 'two' }] },
                { slug: 'second', messages: [] },
              ],
            },
          ],
        },
        { emitEvents, webhookTargets: webhookTargets({ allowHttp: true, allowPrivate: true }) },
      );
    await seed('seeded-quietly', false);
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toEqual([]);

    const loud = await seed('seeded-loudly', true);
    const hook = loud.accounts[0]?.webhooks[0];
    expect(hook?.secret).toMatch(/^whsec_/);
    await until(() => received.length === 4);
    const events = received.map((r) => {
      expect(r.headers['content-type']).toBe('application/json');
      return verified(hook?.secret ?? '', r);
    });
    expect(events.map((e) => e.type)).toEqual([
      'conversation_created',
      'conversation_created',
      'message_created',
      'message_created',
    ]);
    expect(events.slice(0, 2).map((e) => e.data.slug)).toEqual(['first', 'second']);
    expect(events.slice(2).map((e) => [e.data.conversation.slug, e.data.message.text])).toEqual([
      ['first', 'one'],
      ['first', 'two'],
    ]);
  });

  it('fans an event out to the endpoints subscribed when it was written, once each, in order', async () => {
    const c = await makeAccount(h, 'fanned');
    const db = h.db.orm.em.fork().getConnection();
    await worker.stop();
    try {
      const first = await subscribe(c.token, { url: `${url}?first`, events: ['conversation_created'] });
      await createJson(h, c.token, { title: 'One', slug: 'one' });
      await createJson(h, c.token, { title: 'Two', slug: 'two' });
      // Written with the creates, not yet fanned out: the endpoint shows them waiting.
      expect((await listHooks(c.token)).body.webhooks).toMatchObject([{ id: first.body.id, pending_deliveries: 2 }]);
      const later = await subscribe(c.token, { url: `${url}?later`, events: ['conversation_created'] });
      expect(later.status).toBe(201);
      // A server of the version before wrote the first event's delivery with the create: not made twice.
      const [event] = await db.execute(`select id from webhook_event where account_id = ? order by id limit 1`, [c.id]);
      await db.execute(`insert into webhook_delivery (account_id, event_id, endpoint_id) values (?, ?, ?)`, [
        c.id,
        event.id,
        first.body.id,
      ]);
    } finally {
      worker = testWorker();
    }
    await until(() => received.length === 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.map((r) => [r.path, JSON.parse(r.body).data.slug])).toEqual([
      ['/hook?first', 'one'],
      ['/hook?first', 'two'],
    ]);
    expect(
      (await listHooks(c.token)).body.webhooks.map((w: { pending_deliveries: number }) => w.pending_deliveries),
    ).toEqual([0, 0]);
  });

  it('writes the event in the create statement itself: still one insert statement per create', async () => {
    h.statements.length = 0;
    await createJson(h, b.token, { title: 'Unsubscribed account' });
    const creates = h.statements.filter((s) => s.includes('insert into "conversation"'));
    expect(creates).toHaveLength(1);
    expect(creates[0]).toContain('webhook_event');
  });
});

describe('delivery under faults', () => {
  it("keeps one tenant's receiver that never answers from delaying another tenant's deliveries", async () => {
    const slow = await makeAccount(h, 'stalled');
    const fast = await makeAccount(h, 'lively');
    let hung = 0;
    const held: import('node:http').ServerResponse[] = [];
    const dead = createServer((_req, res) => {
      hung++;
      held.push(res); // never answered
    });
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/hook`;
    await worker.stop();
    const lanes = testWorker({ timeoutMs: 2_000, retryDelay: () => 3600 });
    try {
      expect((await subscribe(slow.token, { url: deadUrl, events: ['conversation_created'] })).status).toBe(201);
      expect((await subscribe(fast.token, { url: `${url}?lively`, events: ['conversation_created'] })).status).toBe(
        201,
      );
      for (let i = 0; i < 40; i++) await createJson(h, slow.token, { title: `Stalled ${i}` });
      await until(() => hung > 0);
      const started = Date.now();
      await createJson(h, fast.token, { title: 'Lively' });
      await until(() => received.some((r) => r.path === '/hook?lively'), 5_000);
      // Delivered while the dead receiver still holds its first request (a 2 s timeout).
      expect(Date.now() - started).toBeLessThan(1_500);
      await new Promise((r) => setTimeout(r, 2_500));
      // The dead endpoint costs one timeout per round: its other deliveries went back untried.
      expect(hung).toBe(1);
      const [row] = await h.db.orm.em
        .fork()
        .getConnection()
        .execute(
          `select count(*) filter (where d.attempts = 0)::int as untried, count(*)::int as total
           from webhook_delivery d join webhook_endpoint w on w.id = d.endpoint_id where w.url = ?`,
          [deadUrl],
        );
      expect(row).toEqual({ untried: 39, total: 40 });
    } finally {
      await lanes.stop();
      for (const res of held) res.destroy();
      await new Promise((r) => dead.close(r));
      worker = testWorker();
    }
  });

  it('retries on the documented test scale (WEBHOOK_RETRY_SCALE=0.01) and records every attempt', async () => {
    const scaled = await makeAccount(h, 'scaled');
    await worker.stop();
    // The real schedule (5 s, then 30 s, … with jitter), a hundredth of it: fractions of a second.
    const real = testWorker({ retryDelay: undefined, retryScale: 0.01 });
    try {
      const subscribed = await subscribe(scaled.token, { url: `${url}?scaled`, events: ['conversation_created'] });
      expect(subscribed.status).toBe(201);
      script = [503, 503];
      const started = Date.now();
      await createJson(h, scaled.token, { title: 'Scaled' });
      await until(() => received.filter((r) => r.path === '/hook?scaled').length === 3, 5_000);
      expect(Date.now() - started).toBeLessThan(3_000);
      const attempts = () => webhookAttempts(h.db.orm.em.fork(), scaled.id, subscribed.body.id);
      await until(async () => (await attempts()).length === 3);
      // Newest first: two 503s recorded, then the delivery.
      expect((await attempts()).map((x) => x.status)).toEqual([200, 503, 503]);
      expect((await attempts())[0]?.delivery).toBe('delivered');
    } finally {
      await real.stop();
      worker = testWorker();
    }
  });
});

describe('subscriptions over the API (/api/v1/webhooks)', () => {
  it('creates, lists without the secret, and deletes; an endpoint deleted stops receiving', async () => {
    const made = await subscribe(b.token, { url: `${url}?b`, events: ['message_created'] });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      url: `${url}?b`,
      events: ['message_created'],
      status: 'active',
      failing_since: null,
      disabled_at: null,
      pending_deliveries: 0,
    });
    expect(made.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const listed = await listHooks(b.token);
    expect(listed.status).toBe(200);
    const { secret: _shownOnce, ...shown } = made.body;
    expect(listed.body.webhooks).toEqual([shown]);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    const deleted = await deleteHook(b.token, made.body.id);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: made.body.id, deleted: true });
    expect((await listHooks(b.token)).body.webhooks).toEqual([]);
    expect((await deleteHook(b.token, made.body.id)).body).toEqual({
      error: 'no webhook endpoint with this id in this account',
      code: 'webhook_not_found',
    });
  });

  it('takes a form body, events repeated or given once; every event when none is named', async () => {
    const form = (body: string) =>
      call(
        h,
        new Request(HOOKS, {
          method: 'POST',
          headers: { ...auth(b.token), 'content-type': 'application/x-www-form-urlencoded' },
          body,
        }),
      );
    const once = await form(`url=${encodeURIComponent(url)}&events=conversation_created`);
    const twice = await form(`url=${encodeURIComponent(url)}&events=conversation_created&events=message_created`);
    const none = await subscribe(b.token, { url });
    expect([once.status, twice.status, none.status]).toEqual([201, 201, 201]);
    expect(once.body.events).toEqual(['conversation_created']);
    expect(twice.body.events).toEqual(['conversation_created', 'message_created']);
    expect(none.body.events).toEqual([
      'conversation_created',
      'conversation_updated',
      'conversation_deleted',
      'message_created',
      'message_hidden',
      'message_played',
      'reaction_added',
      'message_transcribed',
      'workflow_step',
    ]);
    for (const w of [once, twice, none]) expect((await deleteHook(b.token, w.body.id)).status).toBe(200);
  });

  it('refuses bad subscriptions with 422 and stores nothing', async () => {
    const strict = secondApp(h, { webhookTargets: { allowHttp: false, allowPrivate: false } });
    const refused: [unknown, string, Harness['app']?][] = [
      [{ url, events: ['conversation_archived'] }, 'invalid_input'],
      [{ url, events: [] }, 'invalid_input'],
      [{ events: ['message_created'] }, 'invalid_input'],
      [{ url: 'not a url' }, 'webhook_target_refused'],
      [{ url: 'ftp://hooks.example.com/x' }, 'webhook_target_refused'],
      [{ url: 'https://user:pw@hooks.example.com/x' }, 'webhook_target_refused'],
      [{ url }, 'webhook_target_refused', strict],
      [{ url: 'https://127.0.0.1/x' }, 'webhook_target_refused', strict],
      [{ url: 'https://169.254.169.254/latest/meta-data' }, 'webhook_target_refused', strict],
      [{ url: 'https://[::ffff:10.0.0.1]/x' }, 'webhook_target_refused', strict],
    ];
    for (const [body, code, app] of refused) {
      const answer: Call = await subscribe(b.token, body, app);
      expect([answer.status, answer.body.code], JSON.stringify(body)).toEqual([422, code]);
    }
    expect((await listHooks(b.token)).body.webhooks).toEqual([]);
  });

  it("never shows or deletes another account's endpoint", async () => {
    const mine = await subscribe(a.token, { url: `${url}?mine` });
    const theirs = await deleteHook(b.token, mine.body.id);
    const missing = await deleteHook(b.token, 2_000_000_000);
    expect([theirs.status, theirs.body]).toEqual([missing.status, missing.body]);
    expect(JSON.stringify((await listHooks(b.token)).body)).not.toContain('?mine');
    expect((await listHooks(a.token)).body.webhooks.map((w: { id: number }) => w.id)).toContain(mine.body.id);
    expect((await deleteHook(a.token, mine.body.id)).status).toBe(200);
  });

  it('answers 422 for an id that is not a whole number, and 405 for a method the path does not take', async () => {
    for (const id of ['abc', '0', '1.5', '99999999999']) {
      expect((await deleteHook(b.token, id)).status, id).toBe(422);
    }
    const put = await call(h, new Request(`${HOOKS}/1`, { method: 'PUT', headers: auth(b.token) }));
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'DELETE']);
  });

  it(`holds an account to ${MAX_WEBHOOK_ENDPOINTS} endpoints, even when they are asked for at once`, async () => {
    const answers = await Promise.all(
      Array.from({ length: MAX_WEBHOOK_ENDPOINTS + 5 }, (_, i) => subscribe(b.token, { url: `${url}?n=${i}` })),
    );
    const statuses = answers.map((x) => x.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
    expect(answers.filter((x) => x.status === 422).map((x) => x.body.code)).toEqual(
      Array(5).fill('webhook_limit_reached'),
    );
    expect((await listHooks(b.token)).body.webhooks).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
    for (const x of answers) if (x.status === 201) await deleteHook(b.token, x.body.id);
  });
});
