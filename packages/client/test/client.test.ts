import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../../apps/api/test/support/server-process.ts';
import { createConversationsClient, describeError } from '../src/index.ts';

let server: RunningServer;
beforeAll(async () => {
  // Webhook endpoints on 127.0.0.1 over http, as development allows.
  server = await startServer({ env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => server?.stop());

describe('@convo/client against a running server', () => {
  it('creates, gets and lists, typed end to end', async () => {
    const api = createConversationsClient({ baseUrl: server.baseUrl, token: server.token });
    const created = await api.conversations.createConversation.mutate({
      title: 'From the client',
      slug: 'from-client',
    });
    expect(created.conversation_url).toBe('https://client.example.com/c/from-client');
    const got = await api.conversations.getConversation.query({ slug: 'FROM-CLIENT' });
    expect(got.id).toBe(created.id);
    expect(got.conversation_credated_time_nice).toMatch(/ UTC$/);
    const page = await api.conversations.getConversations.query({ page: 1 });
    expect(page.conversations.map((c) => c.slug)).toContain('from-client');
  });

  it('batches calls made together into one request when asked', async () => {
    let requests = 0;
    const api = createConversationsClient({
      baseUrl: `${server.baseUrl}/`,
      token: server.token,
      batch: true,
      fetch: (input, init) => {
        requests += 1;
        return fetch(input, init);
      },
    });
    const [one, list] = await Promise.all([
      api.conversations.getConversation.query({}),
      api.conversations.getConversations.query({}),
    ]);
    expect(list.conversations[0]?.id).toBe(one.id);
    expect(requests).toBe(1);
  });

  it('reports the service’s error code and status', async () => {
    const api = createConversationsClient({ baseUrl: server.baseUrl, token: server.token });
    const error = await api.conversations.createConversation.mutate({ slug: 'from-client' }).catch((e: unknown) => e);
    expect(describeError(error)).toEqual({
      message: 'slug is already used by another conversation in this account',
      code: 'slug_taken',
      status: 409,
    });
    const anonymous = createConversationsClient({ baseUrl: server.baseUrl, token: 'cnv_wrong' });
    expect(
      describeError(await anonymous.conversations.getConversation.query({}).catch((e: unknown) => e))?.status,
    ).toBe(401);
    expect(describeError(new Error('x'))).toBeNull();
  });
});

describe('webhook subscriptions through @convo/client', () => {
  it('subscribes a receiver that verifies deliveries with the secret, lists it, and deletes it', async () => {
    const deliveries: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        deliveries.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const api = createConversationsClient({ baseUrl: server.baseUrl, token: server.token });
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const hook = await api.webhooks.createWebhook.mutate({ url, events: ['conversation_created'] });
      expect(hook).toMatchObject({ url, events: ['conversation_created'], status: 'active' });
      const created = await api.conversations.createConversation.mutate({ title: 'Announced', slug: 'announced' });
      const deadline = Date.now() + 15_000;
      while (deliveries.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const [hit] = deliveries;
      const event = new Webhook(hook.secret).verify(hit?.body ?? '', {
        'webhook-id': String(hit?.headers['webhook-id']),
        'webhook-timestamp': String(hit?.headers['webhook-timestamp']),
        'webhook-signature': String(hit?.headers['webhook-signature']),
      });
      expect(event).toMatchObject({ type: 'conversation_created', data: { id: created.id, slug: 'announced' } });

      const { webhooks } = await api.webhooks.listWebhooks.query();
      expect(webhooks.map((w) => w.id)).toEqual([hook.id]);
      expect(webhooks[0]).not.toHaveProperty('secret');
      expect(await api.webhooks.deleteWebhook.mutate({ id: hook.id })).toEqual({ id: hook.id, deleted: true });
      const again = await api.webhooks.deleteWebhook.mutate({ id: hook.id }).catch((e: unknown) => e);
      expect(describeError(again)).toMatchObject({ code: 'webhook_not_found', status: 404 });
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });
});
