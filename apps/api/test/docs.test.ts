import type { AddressInfo } from 'node:net';
import { operations } from '@convo/router';
import { serve } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoMailbox } from '../src/http/demo-mail.ts';
import { axeViolations, hasChromium, launchChromium, warnIfNoChromium } from './support/chromium.ts';
import { BASE, call, type Harness, openHarness, secondApp } from './support/harness.ts';

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
        // Every toggle clicked in the page at once (a click each through the driver took minutes).
        const open = async (selector: string) => {
          await page.evaluate(`document.querySelectorAll('${selector}').forEach((toggle) => toggle.click())`);
          await page.waitForTimeout(500);
        };
        await open('.opblock-summary-control');
        // Drawing every operation open takes the page a minute on two busy cores.
        await page.locator('.responses-wrapper').first().waitFor({ timeout: 180_000 });
        // The schemas, twice: opening one shows the toggles of its members.
        await open('.models-control, .json-schema-2020-12-accordion');
        await open('.json-schema-2020-12-accordion:not(.json-schema-2020-12-accordion--expanded)');
        const found = await axeViolations(page);
        expect(found.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
      });
    },
    300_000,
  );
});

describe("the demo's mail page", () => {
  const mail = {
    to: 'owner@demo.example.com',
    subject: 'Sign in to <Demo>',
    text: 'Open this link and confirm to sign in to <Demo>:\n\nhttp://127.0.0.1:3000/sign-in/abc_DEF-123\n\nIt works once.',
    at: new Date('2026-11-27T10:00:00Z'),
  };

  it('is served by the demo alone, to the machine it runs on, its mail escaped and its links linked', async () => {
    expect((await h.app.fetch(new Request(`${BASE}/_demo/mail`))).status).toBe(404);
    const mailbox = new DemoMailbox();
    mailbox.add(mail);
    const demo = secondApp(h, {}, { demoMail: mailbox });
    expect((await demo.fetch(new Request(`${BASE}/_demo/mail`), { clientIp: '192.0.2.7' })).status).toBe(403);
    const page = await demo.fetch(new Request(`${BASE}/_demo/mail`), { clientIp: '127.0.0.1' });
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const body = await page.text();
    expect(body).toContain('<h2 id="mail-0">Sign in to &lt;Demo&gt;</h2>');
    expect(body).toContain(
      '<a href="http://127.0.0.1:3000/sign-in/abc_DEF-123">http://127.0.0.1:3000/sign-in/abc_DEF-123</a>',
    );
    expect(body).not.toContain('<Demo>');
  });

  it.skipIf(!hasChromium)('reads well at 375 and 1280 px, with no axe violation', async () => {
    const mailbox = new DemoMailbox();
    mailbox.add(mail);
    mailbox.add({ ...mail, subject: 'Confirm your reply on Demo', at: new Date('2026-11-27T10:05:00Z') });
    const demo = secondApp(h, {}, { demoMail: mailbox });
    const server = serve({
      fetch: (req) => demo.fetch(req, { clientIp: '127.0.0.1' }),
      port: 0,
      hostname: '127.0.0.1',
    });
    await new Promise((r) => server.once('listening', r));
    const browser = await launchChromium();
    try {
      for (const width of [375, 1280]) {
        const page = await (await browser.newContext({ viewport: { width, height: 800 }, bypassCSP: true })).newPage();
        await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/_demo/mail`);
        expect(await page.locator('h2').allTextContents()).toEqual(['Confirm your reply on Demo', 'Sign in to <Demo>']);
        // Nothing wider than the screen: a long link wraps.
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        expect(await axeViolations(page)).toEqual([]);
      }
    } finally {
      await browser.close();
      await new Promise((r) => server.close(r));
    }
  });
});
