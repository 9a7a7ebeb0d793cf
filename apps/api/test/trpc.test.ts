import type { AppRouter } from '@convo/router';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, createJson, type Harness, makeAccount, openHarness, type TestAccount } from './support/harness.ts';

let h: Harness;
let a: TestAccount;
let b: TestAccount;

const client = (token: string | null) =>
  createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${BASE}/trpc`,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        fetch: (url, init) => h.app.fetch(new Request(url, init as RequestInit)),
      }),
    ],
  });

const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof TRPCClientError) return e as TRPCClientError<AppRouter>;
    throw e;
  }
  throw new Error('expected the call to fail');
};

beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'alpha');
  b = await makeAccount(h, 'beta');
});
afterAll(async () => h?.close());

describe('typed tRPC procedures', () => {
  it('create, get and list behave as their REST twins', async () => {
    const created = await client(a.token).conversations.createConversation.mutate({
      title: 'Typed',
      slug: 'typed',
      anyone_can_post: false,
    });
    expect(created).toMatchObject({ title: 'Typed', slug: 'typed', public: false });
    expect(created).not.toHaveProperty('workflow');
    const got = await client(a.token).conversations.getConversation.query({ slug: 'TYPED' });
    expect(got.id).toBe(created.id);
    expect(got.conversation_created_time).toMatch(/\.\d{6}$/);
    const listed = await client(a.token).conversations.getConversations.query({ page: 1 });
    expect(listed.conversations.map((c) => c.id)).toEqual([created.id]);
    expect(await client(a.token).conversations.getConversations.query({})).toEqual(listed);
  });

  it('carries what an answer notes as headers, as REST does (Conversation-Matched, Idempotent-Replayed)', async () => {
    const auth = { authorization: `Bearer ${a.token}` };
    await client(a.token).conversations.createConversation.mutate({ title: 'Noted', slug: 'noted' });
    const input = encodeURIComponent(JSON.stringify({ slug: 'noted' }));
    const got = await h.app.fetch(
      new Request(`${BASE}/trpc/conversations.getConversation?input=${input}`, { headers: auth }),
    );
    expect(got.status).toBe(200);
    expect(got.headers.get('conversation-matched')).toBe('slug');
    const create = () =>
      h.app.fetch(
        new Request(`${BASE}/trpc/conversations.createConversation`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'trpc-noted-once' },
          body: JSON.stringify({ title: 'Once over tRPC' }),
        }),
      );
    const first = await create();
    const again = await create();
    expect(first.headers.has('idempotent-replayed')).toBe(false);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(await first.text());
  });

  it("still answers the first release's paths (conversations.list …) as the same procedures, batched too", async () => {
    const auth = { authorization: `Bearer ${a.token}` };
    const get = (path: string) => h.app.fetch(new Request(`${BASE}/trpc/${path}`, { headers: auth }));
    const former = await (await get('conversations.list?input=%7B%22page%22%3A1%7D')).json();
    const current = await (await get('conversations.getConversations?input=%7B%22page%22%3A1%7D')).json();
    expect(former).toEqual(current);
    const batch = await get(
      `conversations.get,account.get?batch=1&input=${encodeURIComponent('{"0":{"slug":"typed"},"1":{}}')}`,
    );
    expect(batch.status).toBe(200);
    const [one, account] = (await batch.json()) as [
      { result: { data: { slug: string } } },
      { result: { data: { key: string } } },
    ];
    expect([one.result.data.slug, account.result.data.key]).toEqual(['typed', 'alpha']);
    const made = await h.app.fetch(
      new Request(`${BASE}/trpc/conversations.create`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Former path' }),
      }),
    );
    expect(made.status).toBe(200);
    expect(await made.json()).toMatchObject({ result: { data: { title: 'Former path' } } });
    await client(a.token).conversations.getConversation.query({ title: 'Former path' });
  });

  it('answers with the same error codes: 401, 404, 409, 422', async () => {
    expect((await failure(client(null).conversations.getConversation.query({}))).data?.httpStatus).toBe(401);
    const notFound = await failure(client(b.token).conversations.getConversation.query({}));
    expect(notFound.data).toMatchObject({ httpStatus: 404, appCode: 'conversation_not_found' });
    expect(notFound.message).toBe('No conversations found');
    const taken = await failure(client(a.token).conversations.createConversation.mutate({ slug: 'typed' }));
    expect(taken.data).toMatchObject({ httpStatus: 409, appCode: 'slug_taken' });
    const bad = await failure(client(a.token).conversations.createConversation.mutate({ slug: 'no spaces' }));
    expect(bad.data).toMatchObject({ httpStatus: 422, appCode: 'invalid_input' });
    const badPage = await failure(client(a.token).conversations.getConversations.query({ page: 0 }));
    expect(badPage.data?.httpStatus).toBe(422);
  });

  it('refuses wrongly typed input even after a REST call switched on the library’s coercion', async () => {
    expect((await createJson(h, a.token, { anyone_can_post: true })).status).toBe(201);
    // A string where a boolean goes: what a client without our types sends.
    const res = await h.app.fetch(
      new Request(`${BASE}/trpc/conversations.createConversation`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ anyone_can_post: 'false' }),
      }),
    );
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: { data: { appCode: 'invalid_input' } } });
  });

  it('keeps accounts apart', async () => {
    const e = await failure(client(b.token).conversations.getConversation.query({ slug: 'typed' }));
    expect(e.data?.httpStatus).toBe(404);
  });

  it('answers malformed tRPC input as a 400 with a true message', async () => {
    const res = await h.app.fetch(
      new Request(`${BASE}/trpc/conversations.createConversation`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
        body: '{not json',
      }),
    );
    const body = (await res.json()) as { error: { message: string; data: { appCode: string } } };
    expect(res.status).toBe(400);
    expect(body.error.data.appCode).toBe('malformed_body');
    expect(body.error.message).not.toMatch(/internal/i);
  });

  it('never leaks internals in an error', async () => {
    const e = await failure(client(a.token).conversations.createConversation.mutate({ intake_page_id: 123_456 }));
    expect(JSON.stringify(e.shape)).not.toMatch(/stack|at .*\.ts|select |insert /i);
  });
});
