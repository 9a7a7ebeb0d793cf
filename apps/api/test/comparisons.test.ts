import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auth,
  BASE,
  call,
  createJson,
  get,
  type Harness,
  makeAccount,
  openHarness,
  type TestAccount,
} from './support/harness.ts';

/*
 * How input is read and compared: pages in plain decimal, slugs by an ASCII-only rule, titles by
 * Unicode case folding, text that must be valid Unicode, and one clock for a new conversation.
 */

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await openHarness();
  acme = await makeAccount(h, 'acme');
  for (const body of [
    { title: 'Straße', slug: 'kelvin' },
    { title: 'ΟΔΟΣ', slug: 'istanbul' },
    { title: 'Café', slug: 'cafe' },
    { title: 'Newest', slug: 'newest' },
  ]) {
    expect((await createJson(h, acme.token, body)).status).toBe(201);
  }
});
afterAll(async () => h?.close());

const slugOf = async (query: string) => (await get(h, acme.token, `get_conversation?${query}`)).body.slug;

describe('page numbers', () => {
  it('take an empty ?page= as page 1', async () => {
    const r = await get(h, acme.token, 'get_conversations?page=');
    expect(r.status).toBe(200);
    expect(r.body.conversations).toHaveLength(4);
  });

  it.each(['0x1', '1e1', '%201', '+1', '1.0', ' 1', '١'])(
    'refuse page=%s (422): plain decimal digits only',
    async (page) => {
      const r = await get(h, acme.token, `get_conversations?page=${page}`);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('invalid_input');
    },
  );
});

describe('slugs', () => {
  it('match ignoring ASCII case', async () => {
    expect(await slugOf('slug=ISTANBUL')).toBe('istanbul');
    expect(await slugOf('slug=Kelvin')).toBe('kelvin');
  });

  it('never match through a non-ASCII letter that lowers to an ASCII one (the Kelvin sign, dotted İ)', async () => {
    // No match means: the most recent conversation.
    expect(await slugOf(`slug=${encodeURIComponent('\u212Aelvin')}`)).toBe('newest');
    expect(await slugOf(`slug=${encodeURIComponent('\u0130stanbul')}`)).toBe('newest');
  });

  it('are unique by the same rule: KELVIN is taken, \u212Aelvin is not a slug at all', async () => {
    expect((await createJson(h, acme.token, { slug: 'KELVIN' })).status).toBe(409);
    expect((await createJson(h, acme.token, { slug: '\u212Aelvin' })).status).toBe(422);
  });
});

describe('titles', () => {
  it.each([
    ['STRASSE', 'kelvin'],
    ['strasse', 'kelvin'],
    ['οδοσ', 'istanbul'],
    ['οδος', 'istanbul'],
    ['CAFE\u0301', 'cafe'],
  ])('%s matches by NFC and full case folding', async (title, slug) => {
    expect(await slugOf(`title=${encodeURIComponent(title)}`)).toBe(slug);
  });
});

describe('text that is not valid Unicode', () => {
  it('is refused (422) in a created title, by REST and tRPC, and nothing is stored', async () => {
    const r = await createJson(h, acme.token, '{"title":"x\\ud800y"}');
    expect(r.status).toBe(422);
    expect(r.body.error).toMatch(/valid Unicode/);
    const t = await call(
      h,
      new Request(`${BASE}/trpc/conversations.createConversation`, {
        method: 'POST',
        headers: { ...auth(acme.token), 'content-type': 'application/json' },
        body: '{"title":"x\\udc00y"}',
      }),
    );
    expect(t.status).toBe(422);
    expect((await get(h, acme.token, 'get_conversations')).body.conversations).toHaveLength(4);
  });

  it('is refused (422) in a lookup', async () => {
    const t = await call(
      h,
      new Request(`${BASE}/trpc/conversations.getConversation?input=${encodeURIComponent('{"slug":"a\\ud800"}')}`, {
        headers: auth(acme.token),
      }),
    );
    expect(t.status).toBe(422);
    expect(t.body.error.data.appCode).toBe('invalid_input');
  });

  it('so the create answer always equals the later read', async () => {
    const title = 'Ünïcödé 😀 \u{1F469}\u200D\u{1F4BB} e\u0301';
    const created = await createJson(h, acme.token, { title, slug: 'unicode' });
    const read = await get(h, acme.token, 'get_conversation?slug=unicode');
    expect(created.body.title).toBe(title);
    expect(read.body.title).toBe(created.body.title);
  });
});
