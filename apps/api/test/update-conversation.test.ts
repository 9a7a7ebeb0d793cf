import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, BASE, call, type Harness, makeAccount, openHarness, type TestAccount } from './support/harness.ts';

/*
 * update_conversation (ours, beside the spec's three): renames a conversation and changes the
 * settings it was made with, each only when given; answers it as get_conversation does, its triage
 * after (triage.test.ts tests the triage); never reaches another account's; and moves the
 * account's change mark, so a kept ETag is stale.
 */

let h: Harness;
let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'alpha');
  b = await makeAccount(h, 'bravo');
});
afterAll(async () => h?.close());

const auth = (t: TestAccount) => ({ authorization: `Bearer ${t.token}` });
const update = (t: TestAccount, body: unknown) =>
  apiCall(h, 'POST', '/conversations/update_conversation', auth(t), body);
const lookup = (t: TestAccount, query: string, headers: Record<string, string> = {}) =>
  apiCall(h, 'GET', `/conversations/get_conversation?${query}`, { ...auth(t), ...headers });

async function create(t: TestAccount, body: Record<string, unknown>) {
  const made = await apiCall(h, 'POST', '/conversations/create_conversation', auth(t), body);
  expect(made.status).toBe(201);
  return made.body as { id: number; slug: string };
}

describe('update_conversation', () => {
  it('renames a conversation and changes its settings, answering it as get_conversation does, with its triage', async () => {
    const made = await create(a, { title: 'November 26th, 2026 Conversation', slug: 'to-rename' });
    const renamed = await update(a, { conversation_id: made.id, title: 'Tom Tester: invoice #1042' });
    expect(renamed.status).toBe(200);
    const found = await lookup(a, 'slug=to-rename');
    // get_conversation's answer, then the triage (which no spec'd answer carries).
    expect(renamed.body).toEqual({
      ...found.body,
      state: 'open',
      source: 'api',
      assignee: null,
      archived: false,
    });
    expect(Object.keys(renamed.body).slice(0, -4)).toEqual(Object.keys(found.body));
    expect(found.body).toMatchObject({
      id: made.id,
      title: 'Tom Tester: invoice #1042',
      slug: 'to-rename',
      anyone_can_post: true,
    });
    // The new title is what a lookup by title finds (ignoring case); the old one finds it no more.
    expect((await lookup(a, 'title=TOM%20TESTER%3A%20INVOICE%20%231042')).headers.get('conversation-matched')).toBe(
      'title',
    );
    expect(
      (await lookup(a, `title=${encodeURIComponent('November 26th, 2026 Conversation')}`)).headers.get(
        'conversation-matched',
      ),
    ).toBe('none');

    // Settings only, from a form body: the title stays.
    const form = await call(
      h,
      new Request(`${BASE}/api/v1/conversations/update_conversation`, {
        method: 'POST',
        headers: { ...auth(a), 'content-type': 'application/x-www-form-urlencoded' },
        body: `conversation_id=${made.id}&anyone_can_post=false&allow_search_engines=false`,
      }),
    );
    expect(form.status).toBe(200);
    expect(form.body).toMatchObject({ title: 'Tom Tester: invoice #1042', anyone_can_post: false, public: false });
  });

  it('answers over tRPC alike', async () => {
    const made = await create(a, { title: 'Over tRPC' });
    const trpc = await call(
      h,
      new Request(`${BASE}/trpc/conversations.updateConversation`, {
        method: 'POST',
        headers: { ...auth(a), 'content-type': 'application/json' },
        body: JSON.stringify({ conversation_id: made.id, allow_anonymous_messages: false }),
      }),
    );
    expect(trpc.status).toBe(200);
    expect(trpc.body).toMatchObject({
      result: { data: { id: made.id, title: 'Over tRPC', allow_anonymous_messages: false } },
    });
  });

  it('makes a kept ETag stale', async () => {
    const made = await create(a, { title: 'Kept', slug: 'kept' });
    const first = await lookup(a, 'slug=kept');
    const tag = first.headers.get('etag') ?? '';
    expect((await lookup(a, 'slug=kept', { 'if-none-match': tag })).status).toBe(304);
    expect((await update(a, { conversation_id: made.id, title: 'Kept, renamed' })).status).toBe(200);
    const after = await lookup(a, 'slug=kept', { 'if-none-match': tag });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ title: 'Kept, renamed' });
  });

  it('never reaches another account’s conversation, and says why it refuses, changing nothing', async () => {
    const theirs = await create(b, { title: 'Bravo’s', slug: 'bravos' });
    const foreign = await update(a, { conversation_id: theirs.id, title: 'Taken over' });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'conversation_not_found' });
    expect((await update(a, { conversation_id: 2_000_000_000, title: 'Nobody' })).status).toBe(404);
    expect((await lookup(b, 'slug=bravos')).body).toMatchObject({ title: 'Bravo’s' });

    const mine = await create(a, { title: 'Mine' });
    for (const body of [
      {},
      { title: 'No id' },
      { conversation_id: mine.id },
      { conversation_id: mine.id, title: '' },
      { conversation_id: mine.id, title: 'x'.repeat(256) },
      { conversation_id: mine.id, title: 'nul\u0000' },
      { conversation_id: 'one', title: 'Bad id' },
      { conversation_id: mine.id, anyone_can_post: 'maybe' },
    ]) {
      const refused = await update(a, body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body).toMatchObject({ code: 'invalid_input', error: expect.any(String) });
    }
    expect((await update(a, { conversation_id: mine.id })).body).toMatchObject({
      error: expect.stringContaining('give at least one of title'),
    });
    expect((await lookup(a, `title=Mine`)).body).toMatchObject({ id: mine.id, title: 'Mine' });
  });

  it('asks for a token', async () => {
    expect((await apiCall(h, 'POST', '/conversations/update_conversation', {}, { conversation_id: 1 })).status).toBe(
      401,
    );
  });
});
