import type { AddressInfo } from 'node:net';
import { operations } from '@convo/router';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, warnIfNoChromium } from './support/chromium.ts';
import { BASE, call, type Harness, openHarness } from './support/harness.ts';

warnIfNoChromium('docs.test.ts');

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h?.close());

describe('the API reference page', () => {
  it('is HTML served from our own assets, with a policy that forbids other origins', async () => {
    const page = await h.app.fetch(new Request(`${BASE}/api/v1/docs`));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'init.js']) {
      expect((await h.app.fetch(new Request(`${BASE}/api/v1/docs/${asset}`))).status).toBe(200);
    }
    const missing = await call(h, new Request(`${BASE}/api/v1/docs/nope.js`));
    expect(missing).toMatchObject({ status: 404, body: { code: 'route_not_found' } });
    expect((await h.app.fetch(new Request(`${BASE}/api/v1/docs/`))).status).toBe(301);
  });

  it.skipIf(!hasChromium)(
    'renders every operation in headless Chromium, fetching nothing from elsewhere',
    async () => {
      const server = serve({ fetch: (req) => h.app.fetch(req), port: 0, hostname: '127.0.0.1' });
      await new Promise((r) => server.once('listening', r));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const elsewhere: string[] = [];
        page.on('request', (r) => {
          if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) elsewhere.push(r.url());
        });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(`${origin}/api/v1/docs`);
        for (const { meta } of operations) {
          await page
            .getByText(meta.openapi.summary ?? '')
            .first()
            .waitFor({ timeout: 20_000 });
          expect(await page.getByText(meta.openapi.path, { exact: true }).count(), meta.openapi.path).toBeGreaterThan(
            0,
          );
        }
        expect(elsewhere).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
        await new Promise((r) => server.close(r));
      }
    },
    60_000,
  );
});
