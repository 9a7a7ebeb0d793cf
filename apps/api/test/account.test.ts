import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, BASE, call, type Harness, makeAccount, openHarness, type TestAccount } from './support/harness.ts';

/* GET /api/v1/account (tRPC account.get): the operation added by following CONTRIBUTING.md. */

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await openHarness();
  acme = await makeAccount(h, 'acme');
  await makeAccount(h, 'other');
});
afterAll(async () => h?.close());

const EXPECTED = {
  key: 'acme',
  name: 'Account acme',
  host: 'https://acme.example.com',
  defaults: { anyone_can_post: true, allow_anonymous_messages: false, allow_search_engines: true },
};

describe('the token’s account', () => {
  it('answers REST with its key, name, host and defaults, and the rate-limit headers', async () => {
    const r = await call(h, new Request(`${BASE}/api/v1/account`, { headers: auth(acme.token) }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual(EXPECTED);
    expect(r.headers.get('ratelimit-limit')).not.toBeNull();
  });

  it('answers tRPC with the same', async () => {
    const r = await call(h, new Request(`${BASE}/trpc/account.getAccount?input=%7B%7D`, { headers: auth(acme.token) }));
    expect(r.body.result.data).toEqual(EXPECTED);
  });

  it('is 401 without a token, 405 to POST, and answers HEAD without a body', async () => {
    const none = await call(h, new Request(`${BASE}/api/v1/account`));
    expect(none).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const post = await call(h, new Request(`${BASE}/api/v1/account`, { method: 'POST', headers: auth(acme.token) }));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await h.app.fetch(
      new Request(`${BASE}/api/v1/account`, { method: 'HEAD', headers: auth(acme.token) }),
    );
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('is in the OpenAPI document and counted under its own metrics label', async () => {
    const doc = (await call(h, new Request(`${BASE}/api/v1/openapi.json`))).body;
    expect(doc.paths['/account'].get.responses['200'].content['application/json'].example).toMatchObject({
      key: 'acme',
    });
    expect(Object.keys(doc.paths['/account'].get.responses).sort()).toEqual(['200', '401', '429', '500', '503']);
    const metrics = await (
      await h.app.fetch(
        new Request(`${BASE}/metrics`, { headers: { authorization: 'Bearer metrics-token-for-tests' } }),
      )
    ).text();
    expect(metrics).toMatch(/http_requests_total\{operation="get_account",method="GET",status="200"\}/);
    expect(metrics).toMatch(/http_requests_total\{operation="trpc:account.getAccount",method="GET",status="200"\}/);
  });
});
