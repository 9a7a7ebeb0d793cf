import { openOrm } from '@convo/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/http/app.ts';
import { withChanges } from '../src/http/settings.ts';
import { createLogger } from '../src/logger.ts';
import { createServices } from '../src/start/services.ts';
import {
  auth,
  BASE,
  call,
  createJson,
  get,
  type Harness,
  METRICS_TOKEN,
  makeAccount,
  openHarness,
  secondApp,
  type TestAccount,
} from './support/harness.ts';

let h: Harness;
let acme: TestAccount;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  h = await openHarness({ logTo: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  acme = await makeAccount(h, 'acme');
});
afterAll(async () => h?.close());

describe('request logs', () => {
  it('give a JSON line per request with id, method, path, status, duration and account, never the token or body', async () => {
    lines.length = 0;
    const r = await call(
      h,
      new Request(`${BASE}/api/v1/conversations/create_conversation`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${acme.token}`,
          'content-type': 'application/json',
          'x-request-id': 'abc-123',
        },
        body: JSON.stringify({ title: 'Top secret title' }),
      }),
    );
    expect(r.headers.get('x-request-id')).toBe('abc-123');
    const line = lines.find((l) => l.msg === 'request');
    expect(line).toMatchObject({
      requestId: 'abc-123',
      method: 'POST',
      path: '/api/v1/conversations/create_conversation',
      status: 201,
      accountId: acme.id,
    });
    expect(line?.ms).toEqual(expect.any(Number));
    const all = JSON.stringify(lines);
    expect(all).not.toContain(acme.token);
    expect(all).not.toContain('Top secret title');
  });

  it('make up a request id when the incoming one is missing or unusable', async () => {
    for (const incoming of [undefined, 'has spaces in it', 'x'.repeat(200)]) {
      const headers: Record<string, string> = incoming ? { 'x-request-id': incoming } : {};
      const r = await call(h, new Request(`${BASE}/healthz`, { headers }));
      expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('answers held to their schema', () => {
  it('a row the schema cannot describe is a logged 500 where answers are checked, and passes through where not', async () => {
    // An operator's hand edit leaves a workflow the contract cannot describe (its id must be a number).
    const r = await createJson(h, acme.token, { title: 'Hand-edited', slug: 'hand-edited' });
    expect(r.status).toBe(201);
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`update conversation set workflow = '{"id": "seven", "name": "x", "steps": []}' where id = ?`, [
        r.body.id,
      ]);
    lines.length = 0;
    const checked = await get(h, acme.token, 'get_conversation?slug=hand-edited');
    expect(checked.status).toBe(500);
    expect(checked.body).toEqual({ error: expect.any(String), code: 'internal' });
    expect(JSON.stringify(checked.body)).not.toContain('seven');
    const logged = lines.find((l) => l.msg === 'request failed');
    expect(JSON.stringify(logged)).toContain('the answer does not match its schema: workflow');
    // Production (NODE_ENV=production) trusts the compiler's check and sends the row as it is.
    const unchecked = secondApp(h, { checkAnswers: false });
    const res = await unchecked.fetch(
      new Request(`${BASE}/api/v1/conversations/get_conversation?slug=hand-edited`, {
        headers: { authorization: `Bearer ${acme.token}` },
      }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ slug: 'hand-edited', workflow: { id: 'seven', name: 'x', steps: [] } });
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute('update conversation set workflow = null where id = ?', [r.body.id]);
  });
});

describe('health, readiness and metrics', () => {
  it('healthz and readyz answer without a token', async () => {
    expect(await call(h, new Request(`${BASE}/healthz`))).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await call(h, new Request(`${BASE}/readyz`))).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('readyz answers 503 while migrations are pending', async () => {
    const orm = await openOrm({ kind: 'pglite' });
    try {
      const app = createApp(
        createServices(orm, createLogger('silent')),
        withChanges({ http: { body: { maxBytes: 1024 } } }),
      );
      const res = await app.fetch(new Request(`${BASE}/readyz`));
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: 'database migrations are pending', code: 'not_ready' });
    } finally {
      await orm.close();
    }
  });

  it('metrics count requests and their latency by operation and status, and show the pool', async () => {
    await createJson(h, acme.token, {});
    await call(h, new Request(`${BASE}/api/v1/conversations/get_conversation`));
    await call(h, new Request(`${BASE}/no/such/path/${Math.random()}`));
    // Each route counts under its own label, a path with a parameter and an account's pages too.
    await call(h, new Request(`${BASE}/api/v1/webhooks/7`, { method: 'DELETE', headers: auth(acme.token) }));
    await call(h, new Request(`${BASE}/favicon.ico`));
    await call(h, new Request('https://acme.example.com/c/no-such-page'));
    await call(h, new Request(`https://acme.example.com/nothing/${Math.random()}`));
    // A page read, then the same page again with nothing changed: kept.
    for (let i = 0; i < 2; i++) await get(h, acme.token, 'get_conversations');
    const res = await h.app.fetch(
      new Request(`${BASE}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }),
    );
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/http_requests_total\{operation="create_conversation",method="POST",status="201"\} \d+/);
    expect(text).toMatch(/http_requests_total\{operation="get_conversation",method="GET",status="401"\} 1/);
    expect(text).toMatch(/http_requests_total\{operation="other",method="GET",status="404"\} \d+/);
    expect(text).toMatch(/http_requests_total\{operation="delete_webhook",method="DELETE",status="404"\} 1/);
    expect(text).toMatch(/http_requests_total\{operation="favicon",method="GET",status="200"\} 1/);
    expect(text).toMatch(/http_requests_total\{operation="site:\/c\/:slug",method="GET",status="404"\} 1/);
    expect(text).toMatch(/http_requests_total\{operation="site:other",method="GET",status="404"\} 1/);
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0\.1",operation="create_conversation",status="201"\}/,
    );
    expect(text).toMatch(/db_pool_connections\{state="open"\} \d+/);
    expect(text).toMatch(/page_cache_answers_total\{from="database"\} [1-9]\d*/);
    expect(text).toMatch(/page_cache_answers_total\{from="memory"\} [1-9]\d*/);
    expect(text).toMatch(/page_cache_bytes [1-9]\d*/);
    expect(text).not.toMatch(/no\/such\/path|nothing\//);
  });
});
