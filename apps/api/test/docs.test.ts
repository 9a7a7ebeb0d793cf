import type { AddressInfo } from 'node:net';
import { operations } from '@convo/router';
import { serve } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, hasChromium, launchChromium, warnIfNoChromium } from './support/chromium.ts';
import { BASE, call, type Harness, openHarness } from './support/harness.ts';

warnIfNoChromium('docs.test.ts');

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h?.close());

/** The app served on a loopback port, and headless Chromium, for one test. */
async function inChromium(test: (browser: Browser, origin: string) => Promise<void>): Promise<void> {
  const server = serve({ fetch: (req) => h.app.fetch(req), port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const browser = await launchChromium();
  try {
    await test(browser, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await browser.close();
    await new Promise((r) => server.close(r));
  }
}

describe('the API reference page', () => {
  it('is HTML served from our own assets, with a policy that forbids other origins', async () => {
    const page = await h.app.fetch(new Request(`${BASE}/api/v1/docs`));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'init.js', 'docs.css']) {
      expect((await h.app.fetch(new Request(`${BASE}/api/v1/docs/${asset}`))).status).toBe(200);
    }
    const missing = await call(h, new Request(`${BASE}/api/v1/docs/nope.js`));
    expect(missing).toMatchObject({ status: 404, body: { code: 'route_not_found' } });
    expect((await h.app.fetch(new Request(`${BASE}/api/v1/docs/`))).status).toBe(301);
  });

  it('has an icon at /favicon.ico on every host, so no tab asks for it in vain', async () => {
    for (const origin of [BASE, 'https://any-account.example.com']) {
      const icon = await h.app.fetch(new Request(`${origin}/favicon.ico`));
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toBe('image/svg+xml');
      expect(await icon.text()).toContain('<svg');
    }
  });

  it.skipIf(!hasChromium)(
    'renders every operation in headless Chromium, fetching nothing from elsewhere',
    async () => {
      await inChromium(async (browser, origin) => {
        const page = await browser.newPage();
        const elsewhere: string[] = [];
        page.on('request', (r) => {
          if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) elsewhere.push(r.url());
        });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        const failed: string[] = [];
        page.on('response', (r) => {
          if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
        });
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
        expect(failed).toEqual([]);
      });
    },
    60_000,
  );

  it.skipIf(!hasChromium)(
    'has no serious or critical accessibility violations (axe-core), with every operation and schema open',
    async () => {
      await inChromium(async (browser, origin) => {
        const page = await (await browser.newContext({ bypassCSP: true })).newPage();
        await page.goto(`${origin}/api/v1/docs`);
        await page.locator('.opblock-summary-control').first().waitFor({ timeout: 20_000 });
        for (const toggle of await page.locator('.opblock-summary-control').all()) await toggle.click();
        // The schemas, twice: opening one shows the toggles of its members.
        for (let round = 0; round < 2; round++) {
          for (const toggle of await page.locator('.models-control, .json-schema-2020-12-accordion').all()) {
            await toggle.click({ timeout: 500 }).catch(() => undefined);
          }
        }
        await page.locator('.responses-wrapper').first().waitFor();
        const found = await axeViolations(page);
        expect(found.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
      });
    },
    120_000,
  );
});
