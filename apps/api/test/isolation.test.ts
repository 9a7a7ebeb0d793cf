import { loadSeed } from '@convo/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createJson,
  get,
  type Harness,
  makeAccount,
  newToken,
  openHarness,
  revoke,
  type TestAccount,
} from './support/harness.ts';

let h: Harness;
let a: TestAccount;
let b: TestAccount;

beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'alpha');
  b = await makeAccount(h, 'beta');
  await createJson(h, a.token, { title: 'Alpha secret', slug: 'alpha-secret' });
  await createJson(h, b.token, { title: 'Beta public', slug: 'beta-public' });
});
afterAll(async () => h?.close());

describe('tenant isolation', () => {
  it("never finds another account's conversation by slug or title", async () => {
    const bySlug = await get(h, b.token, 'get_conversation?slug=alpha-secret');
    const byTitle = await get(h, b.token, 'get_conversation?title=Alpha%20secret');
    expect(bySlug.body.slug).toBe('beta-public');
    expect(byTitle.body.slug).toBe('beta-public');
  });

  it('lists only the own account, on every page', async () => {
    const r = await get(h, b.token, 'get_conversations');
    expect(r.body.conversations.map((c: { slug: string }) => c.slug)).toEqual(['beta-public']);
    expect((await get(h, b.token, 'get_conversations?page=2')).status).toBe(404);
  });

  it("lets each account use a slug another account has, and never changes the other's", async () => {
    const r = await createJson(h, b.token, { slug: 'ALPHA-SECRET', title: 'Mine' });
    expect(r.status).toBe(201);
    expect(r.body.conversation_url).toBe('https://beta.example.com/c/ALPHA-SECRET');
    const mine = await get(h, a.token, 'get_conversation?slug=alpha-secret');
    expect(mine.body.title).toBe('Alpha secret');
  });

  it("cannot use another account's intake page", async () => {
    const r = await createJson(h, b.token, { intake_page_id: a.secondaryPageId });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('intake page not found or not usable for this request');
  });

  it('a revoked token stops working at once; the account’s other tokens do not', async () => {
    const extra = await newToken(h, a.id);
    expect((await get(h, extra.token, 'get_conversation')).status).toBe(200);
    await revoke(h, a.id, extra.id);
    expect((await get(h, extra.token, 'get_conversation')).status).toBe(401);
    expect((await createJson(h, extra.token, {})).status).toBe(401);
    expect((await get(h, a.token, 'get_conversation')).status).toBe(200);
  });
});

describe('concurrent creation of one slug', () => {
  it('lets exactly one succeed; the others get 409, never 500', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, () => createJson(h, a.token, { slug: 'contested' })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(11);
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.code).toBe('slug_taken');
  });
});

describe('messages, members and tags in responses', () => {
  let token: string;
  beforeAll(async () => {
    const seeded = await loadSeed(h.db.orm.em.fork(), {
      accounts: [
        {
          key: 'msgs',
          name: 'Messages',
          host: 'https://msgs.example.com',
          owner: 'o@msgs.example.com',
          users: [
            { email: 'o@msgs.example.com', name: 'Owner' },
            { email: 'u@msgs.example.com', name: 'User' },
          ],
          conversations: [
            {
              title: 'Chat',
              slug: 'chat',
              created_at: '2022-02-01T17:21:09.000001Z',
              members: ['o@msgs.example.com', 'u@msgs.example.com'],
              tags: ['billing', 'vip'],
              messages: [
                { author: 'u@msgs.example.com', text: 'first', created_at: '2022-02-01T17:22:00Z' },
                { author: null, text: 'second', created_at: '2022-02-01T17:23:00Z' },
              ],
            },
          ],
        },
      ],
    });
    token = seeded.accounts[0]?.tokens[0]?.token as string;
  });

  it('renders messages with their URLs and authors, in order', async () => {
    const r = await get(h, token, 'get_conversation?slug=chat');
    expect(r.body.conversation_created_time).toBe('2022-02-01 17:21:09.000001');
    expect(r.body.conversation_credated_time_nice).toBe('February 1st, 2022 05:21PM UTC');
    expect(r.body.users.map((u: { email: string }) => u.email)).toEqual(['o@msgs.example.com', 'u@msgs.example.com']);
    expect(r.body.tags.map((t: { name: string }) => t.name)).toEqual(['billing', 'vip']);
    const [first, second] = r.body.messages;
    expect(first).toEqual({
      id: first.id,
      conversation_id: r.body.id,
      message_type: 'text',
      recorded_duration_seconds: 0,
      author: { anonymous: false, id: r.body.users[1].id, name: 'User', email: 'u@msgs.example.com' },
      message_url: `https://msgs.example.com/c/chat#message-${first.id}`,
      embed_message_url: `https://msgs.example.com/embeds/messages/msgs/${first.id}&show_author=true`,
      download_media_url: null,
      text: 'first',
    });
    expect(second.author).toEqual({ anonymous: true });
    const listed = await get(h, token, 'get_conversations');
    expect(listed.body.conversations[0].messages).toEqual(r.body.messages);
  });

  it('reads a page of 50 conversations with messages in a constant number of statements', async () => {
    const many = Array.from({ length: 50 }, (_, i) => ({
      title: `Bulk ${i}`,
      tags: ['bulk'],
      members: ['o@msgs.example.com', 'u@msgs.example.com'],
      messages: [
        { author: null, text: `m${i}` },
        { author: 'u@msgs.example.com', text: `n${i}` },
      ],
    }));
    const bulkToken = 'cnv_bulk_token_for_statement_counting';
    await loadSeed(h.db.orm.em.fork(), {
      accounts: [
        {
          key: 'bulk',
          name: 'Bulk',
          host: 'https://bulk.example.com',
          users: [
            { email: 'o@msgs.example.com', name: 'Owner' },
            { email: 'u@msgs.example.com', name: 'User' },
          ],
          tokens: [{ name: 'bench', token: bulkToken }],
          conversations: many,
        },
      ],
    });
    await get(h, bulkToken, 'get_conversation'); // token use is recorded once, outside the measured requests
    h.statements.length = 0;
    const page = await get(h, bulkToken, 'get_conversations');
    expect(page.body.conversations).toHaveLength(50);
    expect(page.body.conversations.every((c: { messages: unknown[] }) => c.messages.length === 2)).toBe(true);
    expect(h.statements).toHaveLength(2); // the token lookup and the page
    // Read again with nothing changed, the page is remembered by the account's change mark.
    h.statements.length = 0;
    expect((await get(h, bulkToken, 'get_conversations')).body).toEqual(page.body);
    expect(h.statements).toHaveLength(1);
    h.statements.length = 0;
    await get(h, bulkToken, 'get_conversation?title=Bulk%201');
    expect(h.statements).toHaveLength(2);
    // A create, its owner's membership included, is one statement after the token lookup.
    h.statements.length = 0;
    expect((await createJson(h, bulkToken, { title: 'One round trip' })).status).toBe(201);
    expect(h.statements).toHaveLength(2);
  });
});
