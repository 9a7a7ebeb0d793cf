import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, warnIfNoChromium } from './support/chromium.ts';
import { type Harness, openHarness } from './support/harness.ts';
import { loadSites, present } from './support/site.ts';

/*
 * The addresses the API hands out, opened in a real browser (Debian's Chromium, as the docs test):
 * the account host acme.test resolves to this test's server, and frame.test is another origin that
 * frames the embed.
 */

warnIfNoChromium('pages-browser.test.ts');

const TOKEN = 'browser-test-token-0123456789';
const HOSTILE_TITLE = `<img src=x onerror="document.title='pwned'"> & "quotes"`;
const SHOTS = join(tmpdir(), 'convo-pages');
const axeSource: string = createRequire(import.meta.url)('axe-core').source;

let h: Harness;
let server: ReturnType<typeof serve>;
let port: number;
let acme: string;
let browser: Browser;

const api = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/conversations/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers },
  });
  return res.json() as Promise<any>;
};

beforeAll(async () => {
  if (!hasChromium) return;
  h = await openHarness();
  server = serve({ fetch: (req) => h.app.fetch(req), port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
  acme = `http://acme.test:${port}`;
  const long = (i: number) => `Message ${i}. ${'A long line of text that wraps on a phone. '.repeat(4)}`;
  await loadSites(h, {
    accounts: [
      {
        key: 'acme',
        name: 'Acme Support',
        host: acme,
        users: [{ email: 'olivia@acme.example', name: 'Olivia Owner' }],
        owner: 'olivia@acme.example',
        tokens: [{ name: 'browser', token: TOKEN }],
        conversations: [
          {
            title: 'A long thread',
            slug: 'thread',
            tags: ['support', 'a-very-long-tag-name-without-any-spaces-that-must-still-fit-on-a-phone'],
            messages: Array.from({ length: 30 }, (_, i) => ({
              author: i % 2 === 0 ? 'olivia@acme.example' : null,
              text: i === 7 ? 'x'.repeat(400) : long(i),
              created_at: new Date(Date.UTC(2024, 0, 1, 10, i)).toISOString(),
            })),
          },
          {
            title: HOSTILE_TITLE,
            slug: 'hostile',
            messages: [{ author: null, text: '<script>document.title="pwned"</script>' }],
          },
        ],
      },
    ],
  });
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium(['acme.test', 'frame.test']);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (server) await new Promise((r) => server.close(r));
  await h?.close();
});

/** How far the page reaches past the viewport's right edge, in CSS pixels (0: no horizontal scroll). */
const overflow = async (page: Page) =>
  Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));

async function axe(url: string): Promise<unknown[]> {
  // axe is injected as a script, which the page's own policy rightly forbids: this context bypasses it.
  const context = await browser.newContext({ bypassCSP: true });
  try {
    const page = await context.newPage();
    await page.goto(url);
    await page.addScriptTag({ content: axeSource });
    const violations = await page.evaluate("axe.run().then((r) => r.violations.map((v) => v.id + ': ' + v.help))");
    return Array.isArray(violations) ? violations : [violations];
  } finally {
    await context.close();
  }
}

describe.skipIf(!hasChromium)('conversation pages in Chromium', () => {
  it('opens a conversation_url the API returns, and a message_url scrolls its message into view', async () => {
    const created = await api('create_conversation', {
      method: 'POST',
      body: JSON.stringify({ title: 'Made by the API' }),
    });
    const thread = await api('get_conversation?slug=thread');
    const context = await browser.newContext({ viewport: { width: 375, height: 700 } });
    const page = await context.newPage();
    const elsewhere: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(acme)) elsewhere.push(r.url());
    });

    await page.goto(created.conversation_url);
    expect(await page.locator('h1').textContent()).toBe('Made by the API');
    expect(await page.getByText('No messages yet.').count()).toBe(1);

    await page.goto(thread.conversation_url);
    expect(await page.locator('.message').count()).toBe(30);
    expect(await page.locator('.message .author').first().textContent()).toBe('Olivia Owner');

    const target = thread.messages[22];
    await page.goto(target.message_url);
    const box = await page.locator(`#message-${target.id}`).boundingBox();
    expect(box).not.toBeNull();
    expect(present(box).y).toBeGreaterThanOrEqual(0);
    expect(present(box).y).toBeLessThan(700);
    expect(Number(await page.evaluate('window.scrollY'))).toBeGreaterThan(1000);
    expect(elsewhere).toEqual([]);
    await context.close();
  }, 60_000);

  it('fits a 375 px phone and a desktop without horizontal scrolling (screenshots in the temp folder)', async () => {
    for (const [width, height] of [
      [1280, 800],
      [375, 700],
    ] as const) {
      const context = await browser.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      for (const path of ['/c/thread', '/embeds/conversations/acme/thread', '/c/no-such-page']) {
        await page.goto(`${acme}${path}`);
        expect(await overflow(page), `${path} at ${width}px`).toBeLessThanOrEqual(0);
      }
      await page.goto(`${acme}/c/thread`);
      await page.screenshot({ path: join(SHOTS, `thread-${width}.png`), fullPage: true });
      await context.close();
    }
    expect(existsSync(join(SHOTS, 'thread-375.png'))).toBe(true);
  }, 60_000);

  it('works with JavaScript off', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${acme}/c/thread`);
    expect(await page.locator('h1').textContent()).toBe('A long thread');
    expect(await page.locator('.message').count()).toBe(30);
    await context.close();
  }, 60_000);

  it('shows hostile text as text: nothing in it runs', async () => {
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${acme}/c/hostile`);
    expect(await page.locator('h1').textContent()).toBe(HOSTILE_TITLE);
    expect(await page.title()).toBe(`${HOSTILE_TITLE} · Acme Support`);
    expect(await page.locator('.text').textContent()).toBe('<script>document.title="pwned"</script>');
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await page.close();
  }, 60_000);

  it('renders the embed inside an iframe of another origin; the full page refuses to be framed there', async () => {
    const thread = await api('get_conversation?slug=thread');
    const message = thread.messages[3];
    const page = await browser.newPage();
    // Another site, on its own server: frame.test, which resolves to this machine like acme.test.
    const elsewhere: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>elsewhere</title>
          <iframe id="embed" src="${thread.conversation_embed_url}" width="360" height="400"></iframe>
          <iframe id="message" src="${message.embed_message_url}" width="360" height="200"></iframe>
          <iframe id="page" src="${thread.conversation_url}" width="360" height="200"></iframe>`);
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    await page.goto(`http://frame.test:${(elsewhere.address() as AddressInfo).port}/`);
    const embed = page.frameLocator('#embed');
    expect(await embed.locator('h1').textContent()).toBe('A long thread');
    expect(await embed.locator('.site-header').count()).toBe(0);
    const single = page.frameLocator('#message');
    expect(await single.locator('.message').count()).toBe(1);
    expect(await single.locator('.author').textContent()).toBe('Anonymous');
    // frame-ancestors 'self': Chromium shows its own error page in that frame, not ours.
    await page.waitForLoadState('load');
    expect(await page.frameLocator('#page').locator('.site-header').count()).toBe(0);
    expect(await page.frameLocator('#page').locator('body').textContent()).toMatch(/blocked|refused/i);
    await page.close();
    await new Promise((r) => elsewhere.close(r));
  }, 60_000);

  it('has no accessibility violations (axe-core) on the page, the embeds and the 404 page', async () => {
    const thread = await api('get_conversation?slug=thread');
    for (const url of [
      thread.conversation_url,
      thread.conversation_embed_url,
      thread.messages[0].embed_message_url,
      `${acme}/c/no-such-page`,
    ]) {
      expect(await axe(url), url).toEqual([]);
    }
  }, 120_000);
});
