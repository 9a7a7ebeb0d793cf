import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConversationsClient, describeError } from '../src/index.ts';
import { type RunningServer, startServer } from './support/server.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server?.stop());

describe('@convo/client against a running server', () => {
  it('creates, gets and lists, typed end to end', async () => {
    const api = createConversationsClient({ baseUrl: server.baseUrl, token: server.token });
    const created = await api.conversations.create.mutate({ title: 'From the client', slug: 'from-client' });
    expect(created.conversation_url).toBe('https://client.example.com/c/from-client');
    const got = await api.conversations.get.query({ slug: 'FROM-CLIENT' });
    expect(got.id).toBe(created.id);
    expect(got.conversation_credated_time_nice).toMatch(/ UTC$/);
    const page = await api.conversations.list.query({ page: 1 });
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
    const [one, list] = await Promise.all([api.conversations.get.query({}), api.conversations.list.query({})]);
    expect(list.conversations[0]?.id).toBe(one.id);
    expect(requests).toBe(1);
  });

  it('reports the service’s error code and status', async () => {
    const api = createConversationsClient({ baseUrl: server.baseUrl, token: server.token });
    const error = await api.conversations.create.mutate({ slug: 'from-client' }).catch((e: unknown) => e);
    expect(describeError(error)).toEqual({
      message: 'slug is already used by another conversation in this account',
      code: 'slug_taken',
      status: 409,
    });
    const anonymous = createConversationsClient({ baseUrl: server.baseUrl, token: 'cnv_wrong' });
    expect(describeError(await anonymous.conversations.get.query({}).catch((e: unknown) => e))?.status).toBe(401);
    expect(describeError(new Error('x'))).toBeNull();
  });
});
