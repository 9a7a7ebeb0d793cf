import { repeatDueAt } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/http/app.ts';
import {
  auth,
  call,
  createForm,
  createJson,
  get,
  type Harness,
  MONTHLY_TAG,
  makeAccount,
  openHarness,
  REST,
  secondApp,
  type TestAccount,
} from './support/harness.ts';

const CREATE_KEYS = [
  'allow_anonymous_messages',
  'allow_search_engines',
  'anyone_can_post',
  'conversation_embed_url',
  'conversation_url',
  'id',
  'intake_page_id',
  'messages',
  'public',
  'slug',
  'tags',
  'title',
  'users',
  'via_primary_intake_page',
];
const LIST_KEYS = [...CREATE_KEYS, 'workflow'].sort();
const GET_KEYS = [...LIST_KEYS, 'conversation_created_time', 'conversation_credated_time_nice'].sort();

let h: Harness;
let acme: TestAccount;
let empty: TestAccount;

beforeAll(async () => {
  h = await openHarness();
  acme = await makeAccount(h, 'acme');
  empty = await makeAccount(h, 'empty');
});
afterAll(async () => h?.close());

describe('create_conversation', () => {
  it('answers 201 with exactly the documented members, taking the account defaults', async () => {
    const r = await createJson(h, acme.token, {});
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(CREATE_KEYS);
    expect(r.body).toMatchObject({
      public: true,
      anyone_can_post: true,
      allow_anonymous_messages: false,
      allow_search_engines: true,
      via_primary_intake_page: false,
      intake_page_id: null,
      tags: [],
      messages: [],
      users: [{ id: acme.ownerId, email: 'owner@acme.example.com', name: 'Owner acme' }],
    });
    expect(r.body.slug).toMatch(/^[0-9a-f]{25}$/);
    expect(r.body.conversation_url).toBe(`https://acme.example.com/c/${r.body.slug}`);
    expect(r.body.conversation_embed_url).toBe(`https://acme.example.com/embeds/conversations/acme/${r.body.slug}`);
    expect(r.body.title).toMatch(/^[A-Z][a-z]+ \d{1,2}(st|nd|rd|th), \d{4} Conversation$/);
  });

  it('applies every given field; public mirrors anyone_can_post', async () => {
    const r = await createJson(h, acme.token, {
      title: 'Given title',
      slug: 'Given_Slug-1',
      anyone_can_post: false,
      allow_anonymous_messages: true,
      allow_search_engines: false,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      title: 'Given title',
      slug: 'Given_Slug-1',
      public: false,
      anyone_can_post: false,
      allow_anonymous_messages: true,
      allow_search_engines: false,
    });
  });

  it('accepts form-encoded bodies with true/false booleans', async () => {
    const r = await createForm(
      h,
      acme.token,
      'title=From+a+form&slug=form-made&anyone_can_post=false&allow_search_engines=true',
    );
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      title: 'From a form',
      slug: 'form-made',
      anyone_can_post: false,
      allow_search_engines: true,
    });
  });

  it('accepts a POST without any body', async () => {
    const r = await call(h, new Request(`${REST}/create_conversation`, { method: 'POST', headers: auth(acme.token) }));
    expect(r.status).toBe(201);
  });

  it('ignores members a client may not set', async () => {
    const r = await createJson(h, acme.token, {
      id: 999_999,
      via_primary_intake_page: true,
      conversation_url: 'https://evil.example/c/x',
      public: false,
      users: [{ id: 1 }],
    });
    expect(r.status).toBe(201);
    expect(r.body.id).not.toBe(999_999);
    expect(r.body.via_primary_intake_page).toBe(false);
    expect(r.body.public).toBe(true);
    expect(r.body.conversation_url).toMatch(/^https:\/\/acme\.example\.com\/c\//);
  });

  it('creates through the primary intake page, applying its workflow', async () => {
    const r = await createJson(h, acme.token, { primary_intake_page: true, slug: 'via-primary' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ via_primary_intake_page: true, intake_page_id: null });
    expect(r.body).not.toHaveProperty('workflow');
    const got = await get(h, acme.token, 'get_conversation?slug=via-primary');
    // The page's workflow, copied with each step's state: this one is due a month after creation.
    const created = BigInt(Date.parse(`${got.body.conversation_created_time.slice(0, 23).replace(' ', 'T')}Z`)) * 1000n;
    const due = new Date(Number(repeatDueAt(created, 'month', 1) / 1000n));
    expect(got.body.workflow).toEqual({
      id: acme.workflowId,
      name: 'acme triage',
      steps: [{ ...MONTHLY_TAG, state: 'pending', due_at: due.toISOString(), done_at: null, error: null, runs: 0 }],
    });
  });

  it('creates through a secondary intake page, echoing its id', async () => {
    const r = await createJson(h, acme.token, { intake_page_id: acme.secondaryPageId, slug: 'via-secondary' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ via_primary_intake_page: false, intake_page_id: acme.secondaryPageId });
    expect((await get(h, acme.token, 'get_conversation?slug=via-secondary')).body.workflow).toEqual({});
  });
});

describe('get_conversation', () => {
  it('carries the creation times and the workflow, with real microseconds', async () => {
    const r = await get(h, acme.token, 'get_conversation?slug=given_slug-1');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(GET_KEYS);
    expect(r.body.conversation_created_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/);
    expect(r.body.conversation_credated_time_nice).toMatch(
      /^[A-Z][a-z]+ \d{1,2}(st|nd|rd|th), \d{4} (0\d|1[0-2]):[0-5]\d(AM|PM) UTC$/,
    );
    expect(r.body.workflow).toEqual({});
  });

  it('returns the most recent conversation without parameters, or when nothing matches', async () => {
    const latest = await createJson(h, acme.token, { title: 'Latest one', slug: 'latest-one' });
    for (const q of ['', '?title=no+such+title', '?slug=no-such-slug', '?title=Given+title&slug=form-made']) {
      const r = await get(h, acme.token, `get_conversation${q}`);
      expect(r.status).toBe(200);
      expect(r.body.id).toBe(latest.body.id);
      // The body is the spec's; the header lets a client notice that nothing matched.
      expect(r.headers.get('conversation-matched'), q).toBe('none');
    }
  });

  it('says in Conversation-Matched which keys the answer matched', async () => {
    for (const [q, matched] of [
      ['?slug=FORM-MADE', 'slug'],
      ['?title=from%20a%20FORM', 'title'],
      ['?title=from%20a%20FORM&slug=form-made', 'title, slug'],
      ['?slug=form-mad', 'none'],
    ] as const) {
      const r = await get(h, acme.token, `get_conversation${q}`);
      expect(r.headers.get('conversation-matched'), q).toBe(matched);
    }
  });

  it('matches title and slug exactly, ignoring case; both must match when both are given', async () => {
    expect((await get(h, acme.token, 'get_conversation?title=GIVEN%20TITLE')).body.slug).toBe('Given_Slug-1');
    expect((await get(h, acme.token, 'get_conversation?title=Given')).body.slug).toBe('latest-one');
    expect((await get(h, acme.token, 'get_conversation?slug=FORM-MADE')).body.title).toBe('From a form');
    expect((await get(h, acme.token, 'get_conversation?title=from%20a%20FORM&slug=form-made')).body.slug).toBe(
      'form-made',
    );
  });

  it('picks the most recently created among equal titles', async () => {
    await createJson(h, acme.token, { title: 'Twin', slug: 'twin-old' });
    await createJson(h, acme.token, { title: 'twin', slug: 'twin-new' });
    expect((await get(h, acme.token, 'get_conversation?title=TWIN')).body.slug).toBe('twin-new');
  });

  it('answers 404 with the error body on an account without conversations', async () => {
    const r = await get(h, empty.token, 'get_conversation');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'No conversations found', code: 'conversation_not_found' });
  });
});

describe('get_conversations', () => {
  it('pages 50 at a time, newest first, counting from 1', async () => {
    const before = (await get(h, acme.token, 'get_conversations')).body.conversations.length as number;
    for (let i = 0; i < 60 - before; i++) await createJson(h, acme.token, { title: `Filler ${i}` });
    const first = await get(h, acme.token, 'get_conversations');
    const page1 = await get(h, acme.token, 'get_conversations?page=1');
    const page2 = await get(h, acme.token, 'get_conversations?page=2');
    expect(first.status).toBe(200);
    expect(first.body).toEqual(page1.body);
    expect(first.body.conversations).toHaveLength(50);
    expect(page2.body.conversations).toHaveLength(10);
    expect(first.body.conversations[0].title).toBe(`Filler ${59 - before}`);
    const ids = [...first.body.conversations, ...page2.body.conversations].map((c: { id: number }) => c.id);
    expect(new Set(ids).size).toBe(60);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
  });

  it('links pages with a GitHub-style Link header, keeping other parameters', async () => {
    const path = '/api/v1/conversations/get_conversations';
    const first = await get(h, acme.token, 'get_conversations?x=1');
    expect(first.headers.get('link')).toBe(`<${path}?x=1&page=2>; rel="next"`);
    const second = await get(h, acme.token, 'get_conversations?page=2');
    expect(second.headers.get('link')).toBe(`<${path}?page=1>; rel="prev", <${path}?page=1>; rel="first"`);
    const one = await makeAccount(h, 'one-page');
    await createJson(h, one.token, {});
    const single = await get(h, one.token, 'get_conversations');
    expect(single.status).toBe(200);
    expect(single.headers.get('link')).toBeNull();
  });

  it('builds absolute links only on PUBLIC_URL or a trusted proxy, never on the Host header', async () => {
    const path = '/api/v1/conversations/get_conversations';
    const page1 = (app: App, headers: Record<string, string>) =>
      app.fetch(new Request(`http://evil.example:666${path}`, { headers: { ...auth(acme.token), ...headers } }));
    const spoofed = { host: 'evil.example:666', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    expect((await page1(h.app, spoofed)).headers.get('link')).toBe(`<${path}?page=2>; rel="next"`);

    const configured = secondApp(h, {}, { http: { proxies: { publicUrl: 'https://api.acme.example/' } } });
    expect((await page1(configured, spoofed)).headers.get('link')).toBe(
      `<https://api.acme.example${path}?page=2>; rel="next"`,
    );

    const proxied = secondApp(h, {}, { http: { proxies: { hops: 1 } } });
    const behind = { 'x-forwarded-host': 'api.acme.example', 'x-forwarded-proto': 'https' };
    expect((await page1(proxied, behind)).headers.get('link')).toBe(
      `<https://api.acme.example${path}?page=2>; rel="next"`,
    );
    // A forwarded value that is not a host is ignored: the link stays relative.
    const garbage = { 'x-forwarded-host': 'a b/c', 'x-forwarded-proto': 'https' };
    expect((await page1(proxied, garbage)).headers.get('link')).toBe(`<${path}?page=2>; rel="next"`);
  });

  it('carries the workflow and messages but not the creation times', async () => {
    const r = await get(h, acme.token, 'get_conversations');
    for (const c of r.body.conversations) expect(Object.keys(c).sort()).toEqual(LIST_KEYS);
    expect(Object.keys(r.body)).toEqual(['conversations']);
  });

  it('answers 404 past the last page and on an empty account', async () => {
    for (const [token, q] of [
      [acme.token, '?page=3'],
      [empty.token, ''],
      [empty.token, '?page=1'],
      // Past any page there can be: a 404 like any page past the last, not a 422 quoting a bound.
      [acme.token, '?page=900719925474099'],
    ] as const) {
      const r = await get(h, token, `get_conversations${q}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'No conversations found', code: 'conversation_not_found' });
    }
  });
});
