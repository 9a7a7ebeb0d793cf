import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auth,
  type Call,
  call,
  createJson,
  type Harness,
  makeAccount,
  openHarness,
  REST,
  secondApp,
  type TestAccount,
} from './support/harness.ts';
import { Visitor } from './support/site.ts';

/*
 * Conditional requests: get_conversation and get_conversations carry a strong ETag, and a request
 * whose If-None-Match still matches is answered 304 with no body, without counting against the
 * rate limit. The tag follows the account's change mark, written by the same statement as every
 * change, so no process ever answers 304 after a change.
 */

const LIMIT = 5;
let h: Harness;
let a: TestAccount;
let b: TestAccount;

beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'etags');
  b = await makeAccount(h, 'other-etags');
  for (const slug of ['first', 'second']) await createJson(h, a.token, { title: `Conversation ${slug}`, slug });
  await createJson(h, b.token, { title: 'Elsewhere', slug: 'elsewhere' });
});
afterAll(async () => h?.close());

const read = (token: string, path: string, headers: Record<string, string> = {}, app = h.app, method = 'GET') =>
  call({ ...h, app }, new Request(`${REST}/${path}`, { method, headers: { ...auth(token), ...headers } }));

const tagOf = (r: Call) => r.headers.get('etag') as string;

describe('conditional reads', () => {
  it('tags get_conversation and get_conversations, and answers a matching If-None-Match with 304 and no body', async () => {
    for (const path of ['get_conversations?page=1', 'get_conversation?slug=first', 'get_conversation']) {
      const full = await read(a.token, path);
      expect(full.status).toBe(200);
      expect(tagOf(full)).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      expect(full.headers.get('cache-control')).toBe('private, no-cache');
      expect(full.headers.get('vary')).toBe('Authorization');
      const again = await read(a.token, path, { 'if-none-match': tagOf(full) });
      expect(again.status).toBe(304);
      expect(again.body).toBe('');
      expect(tagOf(again)).toBe(tagOf(full));
      expect(again.headers.get('cache-control')).toBe('private, no-cache');
      // HEAD, a weak comparison and a list match too; `*` does not (a full answer is never wrong).
      for (const inm of [`W/${tagOf(full)}`, `"other", ${tagOf(full)}`]) {
        expect((await read(a.token, path, { 'if-none-match': inm })).status, inm).toBe(304);
      }
      expect((await read(a.token, path, { 'if-none-match': '*' })).status).toBe(200);
      expect((await read(a.token, path, { 'if-none-match': tagOf(full) }, h.app, 'HEAD')).status).toBe(304);
    }
  });

  it('gives each page, lookup and account its own tag', async () => {
    const tags = await Promise.all([
      read(a.token, 'get_conversations?page=1'),
      read(a.token, 'get_conversation?slug=first'),
      read(a.token, 'get_conversation?slug=second'),
      read(b.token, 'get_conversations?page=1'),
    ]).then((rs) => rs.map(tagOf));
    expect(new Set(tags).size).toBe(4);
    // Another account's tag is no key to this one's answer.
    const theirs = await read(a.token, 'get_conversations?page=1', { 'if-none-match': tags[3] as string });
    expect(theirs.status).toBe(200);
  });

  it('changes every tag of the account at once when another process creates a conversation', async () => {
    const other = secondApp(h, { rateLimit: { limit: 0, windowSeconds: 60 } });
    const before = await read(a.token, 'get_conversations?page=1');
    const lookup = await read(a.token, 'get_conversation?slug=first');
    const made = await call(
      { ...h, app: other },
      new Request(`${REST}/create_conversation`, {
        method: 'POST',
        headers: { ...auth(a.token), 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Made elsewhere', slug: 'made-elsewhere' }),
      }),
    );
    expect(made.status).toBe(201);
    expect(made.headers.get('cache-control')).toBe('no-store');
    const after = await read(a.token, 'get_conversations?page=1', { 'if-none-match': tagOf(before) });
    expect(after.status).toBe(200);
    expect(after.body.conversations[0].slug).toBe('made-elsewhere');
    expect(tagOf(after)).not.toBe(tagOf(before));
    // The conversation looked up did not change, but the account did: a new tag, never a stale 304.
    expect((await read(a.token, 'get_conversation?slug=first', { 'if-none-match': tagOf(lookup) })).status).toBe(200);
    // Another account's tags stay as they were.
    const theirs = await read(b.token, 'get_conversations?page=1');
    expect((await read(b.token, 'get_conversations?page=1', { 'if-none-match': tagOf(theirs) })).status).toBe(304);
  });

  it('changes the tag when a reply is posted on the conversation page', async () => {
    const db = h.db.orm.em.fork().getConnection();
    await db.execute(`update account set host = 'https://etags.example.com' where id = ?`, [a.id]);
    await createJson(h, a.token, { title: 'Open to replies', slug: 'open', allow_anonymous_messages: true });
    const before = await read(a.token, 'get_conversation?slug=open');
    expect(before.body.messages).toEqual([]);
    const visitor = new Visitor(h, 'https://etags.example.com');
    expect((await visitor.reply('open', { text: 'A reply' })).status).toBe(303);
    const after = await read(a.token, 'get_conversation?slug=open', { 'if-none-match': tagOf(before) });
    expect(after.status).toBe(200);
    expect(after.body.messages.map((m: { text: string }) => m.text)).toEqual(['A reply']);
  });

  it('counts a 304 against no quota, and still refuses a bad token before anything', async () => {
    const limited = secondApp(h, { rateLimit: { limit: LIMIT, windowSeconds: 3600 } });
    const fresh = await makeAccount(h, 'quota-etags');
    // Made through the limited process too: a token's window row is one, so two policies on it
    // would meet whenever the default minute starts the limited hour (the top of every hour).
    await createJson({ ...h, app: limited }, fresh.token, { title: 'Polled' });
    const first = await read(fresh.token, 'get_conversations?page=1', {}, limited);
    expect(first.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 2));
    for (let i = 0; i < LIMIT * 2; i++) {
      const r = await read(fresh.token, 'get_conversations?page=1', { 'if-none-match': tagOf(first) }, limited);
      expect(r.status).toBe(304);
      expect(r.headers.get('ratelimit-remaining')).toBeNull();
    }
    const counted = await read(fresh.token, 'get_conversations?page=1', {}, limited);
    expect(counted.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 3));
    const stranger = await read(
      'cnv_not-a-token',
      'get_conversations?page=1',
      { 'if-none-match': tagOf(first) },
      limited,
    );
    expect(stranger.status).toBe(401);
  });

  it('keeps errors and creates uncacheable', async () => {
    const missing = await read(a.token, 'get_conversations?page=99');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    expect(missing.headers.get('etag')).toBeNull();
  });
});

/*
 * Pages of conversations are kept in memory by the account's change mark (ConversationListCache): what a
 * client sees must be what the database holds, whichever process made the change.
 */
describe('pages kept by the change mark', () => {
  const titles = (r: Call) => r.body.conversations.map((c: { title: string }) => c.title);

  it('shows a change made through another process on the next read, without If-None-Match', async () => {
    const c = await makeAccount(h, 'kept-pages');
    await createJson(h, c.token, { title: 'Kept one', slug: 'kept-one', allow_anonymous_messages: true });
    const other = secondApp(h);
    const first = await read(c.token, 'get_conversations');
    expect(titles(first)).toEqual(['Kept one']);
    expect(await read(c.token, 'get_conversations').then(titles)).toEqual(['Kept one']);
    const made = await call(
      { ...h, app: other },
      new Request(`${REST}/create_conversation`, {
        method: 'POST',
        headers: { ...auth(c.token), 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Kept two' }),
      }),
    );
    expect(made.status).toBe(201);
    expect(await read(c.token, 'get_conversations').then(titles)).toEqual(['Kept two', 'Kept one']);
    // A reply posted on the conversation's page, served by the other process.
    const db = h.db.orm.em.fork().getConnection();
    await db.execute(`update account set host = 'https://kept.example.com' where id = ?`, [c.id]);
    const moved = await read(c.token, 'get_conversations');
    expect(moved.body.conversations[1].conversation_url).toBe('https://kept.example.com/c/kept-one');
    expect(moved.body.conversations[1].messages).toEqual([]);
    const visitor = new Visitor({ ...h, app: other }, 'https://kept.example.com');
    expect((await visitor.reply('kept-one', { text: 'Replied elsewhere' })).status).toBe(303);
    const replied = await read(c.token, 'get_conversations');
    expect(replied.body.conversations[1].messages.map((m: { text: string }) => m.text)).toEqual(['Replied elsewhere']);
  });

  it('counts a kept page against the quota like any full answer', async () => {
    const limited = secondApp(h, { rateLimit: { limit: LIMIT, windowSeconds: 3600 } });
    const d = await makeAccount(h, 'kept-quota');
    await createJson({ ...h, app: limited }, d.token, { title: 'Counted' });
    for (let i = 2; i <= LIMIT; i++) {
      const r = await read(d.token, 'get_conversations', {}, limited);
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-remaining')).toBe(String(LIMIT - i));
    }
    expect((await read(d.token, 'get_conversations', {}, limited)).status).toBe(429);
  });

  it('keeps each page with its own links, and no page past the end', async () => {
    const e = await makeAccount(h, 'kept-links');
    for (let i = 0; i < 51; i++) await createJson(h, e.token, { title: `Many ${i}` });
    const one = await read(e.token, 'get_conversations?page=1');
    const two = await read(e.token, 'get_conversations?page=2');
    expect(one.body.conversations).toHaveLength(50);
    expect(two.body.conversations).toHaveLength(1);
    expect(one.headers.get('link')).toContain('rel="next"');
    expect(two.headers.get('link')).not.toContain('rel="next"');
    expect((await read(e.token, 'get_conversations?page=2')).headers.get('link')).toBe(two.headers.get('link'));
    expect((await read(e.token, 'get_conversations?page=3')).status).toBe(404);
    await createJson(h, e.token, { title: 'Pushes one more onto page 2' });
    const moved = await read(e.token, 'get_conversations?page=2');
    expect(moved.body.conversations.map((c: { title: string }) => c.title)).toEqual(['Many 1', 'Many 0']);
  });
});
