import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auth,
  BASE,
  call,
  createForm,
  createJson,
  get,
  type Harness,
  MAX_BODY_BYTES,
  makeAccount,
  openHarness,
  REST,
  type TestAccount,
} from './support/harness.ts';

let h: Harness;
let acme: TestAccount;
let bare: TestAccount;
let other: TestAccount;

const count = async (token: string) => {
  const r = await get(h, token, 'get_conversations');
  return r.status === 404 ? 0 : (r.body.conversations.length as number);
};

beforeAll(async () => {
  h = await openHarness();
  acme = await makeAccount(h, 'acme');
  bare = await makeAccount(h, 'bare', false);
  other = await makeAccount(h, 'other');
  expect((await createJson(h, acme.token, { slug: 'taken', title: 'Taken' })).status).toBe(201);
});
afterAll(async () => h?.close());

const expectError = (r: { status: number; body: unknown; headers: Headers }, status: number, code: string) => {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.body).toEqual({ error: expect.any(String), code });
  expect((r.body as { error: string }).error.length).toBeGreaterThan(0);
};

describe('refused creates change nothing', () => {
  it.each([
    ['a slug with a space', () => ({ slug: 'has space' })],
    ['a slug with a dot', () => ({ slug: 'a.b' })],
    ['a slug with unicode', () => ({ slug: 'ümlaut' })],
    ['an empty slug', () => ({ slug: '' })],
    ['a slug over 100 characters', () => ({ slug: 'x'.repeat(101) })],
    ['an empty title', () => ({ title: '' })],
    ['a title over 255 characters', () => ({ title: 'x'.repeat(256) })],
    ['a title with a NUL character', () => ({ title: 'a\u0000b' })],
    ['a slug with a NUL character', () => ({ slug: 'a\u0000b' })],
    ['a string for a boolean', () => ({ anyone_can_post: 'false' })],
    ['a number for a boolean', () => ({ allow_search_engines: 0 })],
    ['null for a boolean', () => ({ allow_anonymous_messages: null })],
    ['a boolean for the intake page id', () => ({ intake_page_id: true })],
    ['an array for the intake page id', () => ({ intake_page_id: [acme.secondaryPageId] })],
    ['a string for the intake page id', () => ({ intake_page_id: String(acme.secondaryPageId) })],
    ['a fraction for the intake page id', () => ({ intake_page_id: 1.5 })],
    ['a huge intake page id', () => ({ intake_page_id: 2 ** 40 })],
    ['an object for the title', () => ({ title: { $ne: '' } })],
    ['an array for the slug', () => ({ slug: ['a', 'b'] })],
  ])('422 for %s', async (_what, body) => {
    const before = await count(acme.token);
    expectError(await createJson(h, acme.token, body()), 422, 'invalid_input');
    expect(await count(acme.token)).toBe(before);
  });

  it('409 for a slug already used in the account, ignoring case', async () => {
    const before = await count(acme.token);
    for (const slug of ['taken', 'TAKEN', 'Taken']) {
      expectError(await createJson(h, acme.token, { slug }), 409, 'slug_taken');
    }
    expect(await count(acme.token)).toBe(before);
  });

  it('400 for malformed JSON; 422 for JSON that is not an object', async () => {
    expectError(await createJson(h, acme.token, '{"title": '), 400, 'malformed_body');
    for (const body of ['[]', '"title"', '42', 'null']) {
      expectError(await createJson(h, acme.token, body), 422, 'invalid_input');
    }
  });

  it('415 for other content types', async () => {
    const r = await call(
      h,
      new Request(`${REST}/create_conversation`, {
        method: 'POST',
        headers: { ...auth(acme.token), 'content-type': 'text/xml' },
        body: '<title>x</title>',
      }),
    );
    expectError(r, 415, 'unsupported_media_type');
  });

  it("415 saying to send application/json for JSON sent as a form (curl -d's default), creating nothing", async () => {
    const before = await count(acme.token);
    for (const body of ['{"title":"From curl"}', ' [{"title":"x"}]']) {
      const r = await createForm(h, acme.token, body);
      expectError(r, 415, 'json_sent_as_form');
      expect(r.body.error).toContain('content-type: application/json');
    }
    // A form whose first field merely starts with a brace is still a form.
    const form = await createForm(h, acme.token, '{title=x');
    expect(form.status).toBe(201);
    expect(await count(acme.token)).toBe(before + 1);
  });

  it('413 for a body over the documented limit, declared or streamed', async () => {
    const big = JSON.stringify({ title: 'x'.repeat(MAX_BODY_BYTES) });
    expectError(await createJson(h, acme.token, big), 413, 'body_too_large');
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const r = await call(
      h,
      new Request(`${REST}/create_conversation`, {
        method: 'POST',
        headers: { ...auth(acme.token), 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit),
    );
    expectError(r, 413, 'body_too_large');
  });

  it('form bodies: a non-boolean word for a boolean and repeated fields are refused', async () => {
    const form = (body: string) =>
      call(
        h,
        new Request(`${REST}/create_conversation`, {
          method: 'POST',
          headers: { ...auth(acme.token), 'content-type': 'application/x-www-form-urlencoded' },
          body,
        }),
      );
    expectError(await form('anyone_can_post=yes'), 422, 'invalid_input');
    expectError(await form('title=a&title=b'), 422, 'invalid_input');
    expectError(await form('intake_page_id=abc'), 422, 'invalid_input');
  });
});

describe('intake page rules', () => {
  it.each([
    ['another account’s page', () => ({ intake_page_id: other.secondaryPageId })],
    ['an unknown page', () => ({ intake_page_id: 987_654 })],
    ['the primary page given by id', () => ({ intake_page_id: acme.primaryPageId })],
  ])('422 with one message for %s', async (_what, body) => {
    const before = await count(acme.token);
    const r = await createJson(h, acme.token, body());
    expectError(r, 422, 'intake_page_unusable');
    expect(r.body.error).toBe('intake page not found or not usable for this request');
    expect(await count(acme.token)).toBe(before);
  });

  it('422 for both options at once, and for a primary page the account lacks', async () => {
    expectError(
      await createJson(h, acme.token, { primary_intake_page: true, intake_page_id: acme.secondaryPageId }),
      422,
      'intake_page_unusable',
    );
    expectError(await createJson(h, bare.token, { primary_intake_page: true }), 422, 'intake_page_unusable');
    expect(await count(bare.token)).toBe(0);
  });

  it('primary_intake_page false is the same as leaving it out', async () => {
    const r = await createJson(h, bare.token, { primary_intake_page: false });
    expect(r.status).toBe(201);
    expect(r.body.via_primary_intake_page).toBe(false);
  });
});

describe('paging parameters', () => {
  it.each(['0', '-1', '1.5', 'abc', '1e999', '1&page=2', String(2 ** 60)])('422 for page=%s', async (page) => {
    const r = await get(h, acme.token, `get_conversations?page=${page}`);
    expectError(r, 422, 'invalid_input');
    expect(r.body.error).toBe('page: page must be a whole number ≥ 1');
  });
});

describe('parameters named like Object.prototype members', () => {
  it('are ordinary unknown parameters, never a 500', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      for (const path of ['get_conversation', 'get_conversations']) {
        const r = await get(h, acme.token, `${path}?${name}=x&${name}=y`);
        expect(r.status).toBe(200);
      }
    }
  });
});

describe('lookup values no conversation can hold', () => {
  it('a NUL in title or slug matches nothing, so the most recent conversation answers', async () => {
    const latest = await get(h, acme.token, 'get_conversation');
    for (const q of ['title=a%00b', 'slug=%00', 'title=Taken&slug=taken%00']) {
      const r = await get(h, acme.token, `get_conversation?${q}`);
      expect(r.status).toBe(200);
      expect(r.body.id).toBe(latest.body.id);
    }
  });
});

describe('routes', () => {
  it('404 JSON for unknown paths under /api/v1 and elsewhere', async () => {
    expectError(await get(h, acme.token, 'nope'), 404, 'route_not_found');
    expectError(await call(h, new Request(`${BASE}/api/v1`)), 404, 'route_not_found');
    expectError(await call(h, new Request(`${BASE}/api/v2/conversations/get_conversation`)), 404, 'route_not_found');
  });

  it('answers HEAD on the GET operations like GET, without a body', async () => {
    const head = await h.app.fetch(
      new Request(`${REST}/get_conversations`, { method: 'HEAD', headers: auth(acme.token) }),
    );
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await head.text()).toBe('');
    const anonymous = await h.app.fetch(new Request(`${REST}/get_conversation`, { method: 'HEAD' }));
    expect(anonymous.status).toBe(401);
  });

  it('405 JSON with Allow for a wrong method', async () => {
    const r = await call(h, new Request(`${REST}/create_conversation`, { headers: auth(acme.token) }));
    expectError(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('POST');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const g = await call(h, new Request(`${REST}/get_conversations`, { method, headers: auth(acme.token) }));
      expectError(g, 405, 'method_not_allowed');
      expect(g.headers.get('allow')).toBe('GET, HEAD');
    }
  });
});

describe('authentication', () => {
  const ops = (token: Record<string, string>) => [
    new Request(`${REST}/create_conversation`, {
      method: 'POST',
      headers: { ...token, 'content-type': 'application/json' },
      body: '{}',
    }),
    new Request(`${REST}/get_conversation`, { headers: token }),
    new Request(`${REST}/get_conversations`, { headers: token }),
  ];

  it.each([
    ['no token', {}],
    ['an unknown token', { authorization: 'Bearer cnv_unknownunknownunknownunknown' }],
    ['a malformed header', { authorization: 'Bearer' }],
    ['a token with spaces', { authorization: 'Bearer a b c' }],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
  ])('401 on every operation with %s', async (_what, header) => {
    const before = await count(acme.token);
    for (const req of ops(header)) expectError(await call(h, req), 401, 'unauthorized');
    expect(await count(acme.token)).toBe(before);
  });

  it('accepts the raw token as well as Bearer', async () => {
    expect(
      (await call(h, new Request(`${REST}/get_conversation`, { headers: { authorization: acme.token } }))).status,
    ).toBe(200);
  });
});
