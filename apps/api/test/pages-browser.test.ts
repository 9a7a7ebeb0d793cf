import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, hasChromium, launchChromium, screenshot, warnIfNoChromium } from './support/chromium.ts';
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
            title: 'Longer than a page',
            slug: 'long',
            messages: Array.from({ length: 130 }, (_, i) => ({ author: null, text: `Message number ${i + 1}` })),
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

/** The account's id and its owner's. */
async function ownerIds(): Promise<{ account: number; owner: number }> {
  const rows = (await h.db.orm.em
    .fork()
    .getConnection()
    .execute(
      "select a.id as account, u.id as owner from account a join account_user u on u.id = a.owner_id where a.key = 'acme'",
    )) as { account: number; owner: number }[];
  return present(rows[0], 'the owner');
}

/** A session of the account's owner, as the cookie a browser holds once signed in. */
async function ownerSession(): Promise<{ name: string; value: string; url: string }> {
  const { account, owner } = await ownerIds();
  const value = 's'.repeat(43);
  await h.services.people.createSession(account, owner, value, 3600);
  return { name: 'convo_session', value, url: acme };
}

async function axe(
  url: string,
  cookies: { name: string; value: string; url: string }[] = [],
  /** What the person opens on the page before it is checked (a folded panel's summary). */
  open?: string,
): Promise<string[]> {
  const context = await browser.newContext({ bypassCSP: true });
  await context.addCookies(cookies);
  try {
    const page = await context.newPage();
    await page.goto(url);
    if (open) await page.getByText(open, { exact: true }).click();
    return (await axeViolations(page)).map((v) => `${v.id}: ${v.help}`);
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
      await screenshot(page, { path: join(SHOTS, `thread-${width}.png`), fullPage: true });
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

  it('shows times in the reader’s time zone with JavaScript on ("2 hours ago" while recent), in UTC without', async () => {
    const created = await api('create_conversation', { method: 'POST', body: JSON.stringify({ title: 'Just now' }) });
    const context = await browser.newContext({ timezoneId: 'Asia/Tokyo', locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${acme}/c/thread`);
    // 2024-01-01 10:00 UTC is 19:00 in Tokyo.
    const first = page.locator('.message time').first();
    expect(await first.textContent()).toBe('January 1, 2024 at 7:00 PM');
    expect(await first.getAttribute('title')).toBe('January 1, 2024 at 7:00 PM');
    expect(await first.getAttribute('datetime')).toBe('2024-01-01T10:00:00.000000Z');
    await page.goto(created.conversation_url);
    expect(await page.locator('.meta time').textContent()).toMatch(/^(now|\d+ seconds? ago)$/);
    await context.close();
    const off = await browser.newContext({ javaScriptEnabled: false, timezoneId: 'Asia/Tokyo' });
    const plain = await off.newPage();
    await plain.goto(`${acme}/c/thread`);
    expect(await plain.locator('.message time').first().textContent()).toBe('January 1st, 2024 10:00AM UTC');
    await off.close();
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
      // The snippet docs/pages.md gives hosts: size the frame to the height the embed tells.
      res.end(`<!doctype html><title>elsewhere</title>
          <script>
            window.heights = [];
            addEventListener('message', (e) => {
              if (e.data && e.data.type === 'convo:height') {
                window.heights.push(e.data.height);
                for (const f of document.querySelectorAll('iframe')) if (f.contentWindow === e.source) f.style.height = e.data.height + 'px';
              }
            });
          </script>
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
    // Each embed told its height, and the host sized its frame to it: the thread's is long.
    await page.waitForFunction('window.heights.length >= 2');
    const embedHeight = await page.locator('#embed').evaluate((f) => f.getBoundingClientRect().height);
    expect(embedHeight).toBeGreaterThan(1000);
    // frame-ancestors 'self': Chromium shows its own error page in that frame, not ours.
    await page.waitForLoadState('load');
    expect(await page.frameLocator('#page').locator('.site-header').count()).toBe(0);
    expect(await page.frameLocator('#page').locator('body').textContent()).toMatch(/blocked|refused/i);
    await page.close();
    await new Promise((r) => elsewhere.close(r));
  }, 60_000);

  it('has no accessibility violations (axe-core) on the page, its pages of messages, the embeds, sign-in and the 404 page', async () => {
    const thread = await api('get_conversation?slug=thread');
    // A mailed link's page, with a reply that waits: made as the reply form makes it.
    const { hashToken } = await import('@convo/db');
    const token = 'z'.repeat(43);
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into sign_in_link (account_id, email, name, token_hash, return_path, pending_reply, expires_at)
         select id, 'new@acme.example', 'New Person', ?, '/c/thread', ?, now() + interval '15 minutes' from account where key = 'acme'`,
        [
          hashToken(token),
          JSON.stringify({ conversationId: thread.id, text: 'My reply\nover two lines', submitKey: null }),
        ],
      );
    for (const url of [
      thread.conversation_url,
      thread.conversation_embed_url,
      thread.messages[0].embed_message_url,
      `${acme}/c/long`,
      `${acme}/c/long?page=1`,
      `${acme}/`,
      `${acme}/sign-in`,
      `${acme}/sign-in/${token}`,
      `${acme}/c/no-such-page`,
    ]) {
      expect(await axe(url), url).toEqual([]);
    }
    // What the team sees: the team badge and the members' form.
    const session = await ownerSession();
    expect(await axe(thread.conversation_url, [session]), 'signed in as the owner').toEqual([]);
    expect(
      await axe(thread.conversation_url, [session], 'Conversation settings'),
      'the conversation settings, opened',
    ).toEqual([]);
    expect(await axe(`${acme}/settings`, [session]), 'mail settings').toEqual([]);
    expect(await axe(`${acme}/`, [session]), "the team's inbox").toEqual([]);
    expect(await axe(`${acme}/settings`), 'mail settings, signed out').toEqual([]);
    const { muteToken } = await import('@convo/domain');
    const ids = await ownerIds();
    const mute = await muteToken(await h.services.secrets.signingKey(), {
      accountId: ids.account,
      userId: ids.owner,
      conversationId: thread.id,
      kind: 'all',
    });
    expect(await axe(`${acme}/unsubscribe/${mute}`), 'a mail link').toEqual([]);
    // Pictures of the new pages, to look at as a person would.
    for (const width of [375, 1280]) {
      const page = await browser.newPage({ viewport: { width, height: 900 }, javaScriptEnabled: false });
      for (const [name, url] of [
        ['long', `${acme}/c/long`],
        ['link', `${acme}/sign-in/${token}`],
        ['home', `${acme}/`],
        ['embed', `${acme}/embeds/conversations/acme/long`],
      ] as const) {
        await page.goto(url);
        expect(await overflow(page), `${name} at ${width}`).toBe(0);
        await screenshot(page, { path: join(SHOTS, `${name}-${width}.png`) });
      }
      await page.context().addCookies([session]);
      await page.goto(`${thread.conversation_url}#manage-members`);
      expect(await overflow(page), `team at ${width}`).toBe(0);
      await screenshot(page, { path: join(SHOTS, `team-${width}.png`) });
      await page.goto(`${acme}/`);
      expect(await overflow(page), `inbox at ${width}`).toBe(0);
      await screenshot(page, { path: join(SHOTS, `inbox-${width}.png`) });
      await page.goto(`${acme}/settings`);
      await screenshot(page, { path: join(SHOTS, `settings-${width}.png`) });
      await page.goto(`${acme}/unsubscribe/${mute}`);
      await screenshot(page, { path: join(SHOTS, `unsubscribe-${width}.png`) });
      await page.close();
    }
  }, 120_000);
});
