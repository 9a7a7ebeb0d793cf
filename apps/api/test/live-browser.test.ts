import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LiveListener, loadSeed } from '@convo/db';
import { sendNotifications } from '@convo/domain';
import { signInLinks } from '@convo/pages';
import { serve } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeServer } from '../src/start/serve-node.ts';
import { axeViolations, hasChromium, launchChromium, screenshot, warnIfNoChromium } from './support/chromium.ts';
import { listen } from './support/events.ts';
import { type Harness, openHarness } from './support/harness.ts';
import { present, Visitor } from './support/site.ts';

/*
 * Live updates as people see them, in Chromium (one server process; chaos/live.chaos.ts does two
 * behind nginx): the team's inbox moves a conversation someone answered to the top, unread; an
 * embed in another site's frame shows a new message in place; a visitor's play of the team's
 * recording is reported once and shows on the author's open page; with JavaScript off, a page
 * opens no stream and stays as it was loaded.
 */

warnIfNoChromium('live-browser.test.ts');

const SHOTS = join(tmpdir(), 'convo-pages');

let h: Harness;
let listener: LiveListener;
let server: Server;
let blogServer: ReturnType<typeof serve>;
let site: string;
let blog: string;
let browser: Browser;
let team: { name: string; value: string; url: string };

beforeAll(async () => {
  if (!hasChromium) return;
  h = await openHarness({ app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } } });
  listener = listen(h);
  // The handler the server runs on Node: each stream is written to its connection.
  server = nodeServer(h.app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  site = `http://desk.test:${(server.address() as AddressInfo).port}`;
  blogServer = serve({
    fetch: () =>
      new Response(
        `<!doctype html><html lang="en"><title>Blog</title><h1>Our blog</h1>
<iframe title="The conversation" src="${site}/embeds/conversations/desk/first" width="600" height="700"></iframe>`,
        { headers: { 'content-type': 'text/html; charset=utf-8' } },
      ),
    port: 0,
    hostname: '127.0.0.1',
  });
  await new Promise((r) => blogServer.once('listening', r));
  blog = `http://blog.test:${(blogServer.address() as AddressInfo).port}`;
  const loaded = await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'desk',
        name: 'Desk',
        host: site,
        owner: 'olivia@desk.test',
        users: [{ email: 'olivia@desk.test', name: 'Olivia Owner' }],
        conversations: ['first', 'second', 'third'].map((slug, i) => ({
          title: `The ${slug} question`,
          slug,
          created_at: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
          allow_anonymous_messages: true,
          messages: [{ author: null, text: `Asking the ${slug} time` }],
        })),
      },
    ],
  });
  const account = present(loaded.accounts[0]).id;
  const [owner] = (await h.db.orm.em
    .fork()
    .getConnection()
    .execute("select id from account_user where email = 'olivia@desk.test'")) as { id: number }[];
  const value = randomBytes(32).toString('base64url');
  await h.services.people.createSession(account, present(owner).id, value, 3600);
  team = { name: 'convo_session', value, url: site };
  browser = await launchChromium(['desk.test', 'blog.test']);
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await listener?.close();
  h?.services.live.close();
  if (server) await new Promise((r) => server.close(r));
  if (blogServer) await new Promise((r) => blogServer.close(r));
  await h?.close();
});

/** Posts an anonymous reply to `slug` as another visitor would, from its page's form. */
async function reply(slug: string, text: string) {
  expect((await new Visitor(h, site).reply(slug, { text })).status).toBe(303);
}

/** Olivia (the team) posts a 3-second video to `slug` from its page; its message id. */
async function teamVideo(slug: string, text: string): Promise<number> {
  const olivia = new Visitor(h, site);
  olivia.cookies.set(team.name, team.value);
  const bytes = new Uint8Array(readFileSync(new URL('./fixtures/media/video-3s.webm', import.meta.url)));
  const posted = await olivia.replyWithRecording(slug, { text }, { name: 'v.webm', type: 'video/webm', bytes });
  expect(posted.status).toBe(303);
  return Number(/#message-(\d+)$/.exec(posted.headers.get('location') ?? '')?.[1]);
}

/** The inbox's rows: each conversation's title and whether it is marked unread. */
const rows = (page: Page) =>
  page
    .locator('ol.inbox > li')
    .evaluateAll((items) =>
      items.map((li) => ({ title: li.querySelector('a')?.textContent, unread: li.classList.contains('unread') })),
    );

describe.skipIf(!hasChromium)('live updates in Chromium', { timeout: 60_000 }, () => {
  it('moves an answered conversation to the top of the team’s inbox, unread, without a reload', async () => {
    const context = await browser.newContext({ bypassCSP: true });
    await context.addCookies([team]);
    const page = await context.newPage();
    await Promise.all([page.waitForResponse((r) => r.url().endsWith('/events')), page.goto(`${site}/`)]);
    // Olivia has read the first one: it is down the list, and read.
    await page.goto(`${site}/c/first`);
    await Promise.all([page.waitForResponse((r) => r.url().endsWith('/events')), page.goto(`${site}/`)]);
    await page.evaluate('window.notReloaded = true');
    expect((await rows(page)).at(-1)).toEqual({ title: 'The first question', unread: false });

    await reply('first', 'Any news?');
    await page.locator('ol.inbox > li').first().filter({ hasText: 'The first question' }).waitFor({ timeout: 5_000 });
    expect((await rows(page))[0]).toEqual({ title: 'The first question', unread: true });
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    await page.locator('#live-status', { hasText: 'New activity in the inbox.' }).waitFor({ state: 'attached' });
    expect(await axeViolations(page)).toEqual([]);
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await page.evaluate('document.documentElement.scrollWidth > window.innerWidth')).toBe(false);
      await screenshot(page, { path: join(SHOTS, `live-inbox-${width}.png`), fullPage: true });
    }
    await context.close();
  });

  it('says a message came below the screen, and takes the reader there', async () => {
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 300 } });
    const page = await context.newPage();
    await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/c/second/events'),
      page.goto(`${site}/c/second`),
    ]);
    await reply('second', 'Down here');
    const cue = page.locator('button.new-message-cue');
    await cue.waitFor({ timeout: 5_000 });
    expect(await cue.textContent()).toContain('New message from');
    expect(await axeViolations(page)).toEqual([]);
    await cue.click();
    await cue.waitFor({ state: 'detached' });
    expect(await page.getByText('Down here').isVisible()).toBe(true);
    await context.close();
  });

  it('puts a thread reply under its message, and replies in a thread where the reader is', async () => {
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 900 } });
    const page = await context.newPage();
    await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/c/third/events'),
      page.goto(`${site}/c/third`),
    ]);
    const [root] = (await h.db.orm.em
      .fork()
      .getConnection()
      .execute("select id from message where text = 'Asking the third time'")) as { id: number }[];
    const rootId = present(root).id;
    // Someone else answers in its thread: it appears under the message, with the thread's count.
    expect((await new Visitor(h, site).reply('third', { parent: String(rootId), text: 'In the thread' })).status).toBe(
      303,
    );
    const preview = page.locator(`li:has(> #message-${rootId}) > .thread-preview`);
    await preview.locator('.thread-replies', { hasText: 'In the thread' }).waitFor({ timeout: 5_000 });
    expect(await preview.locator('.thread-count').textContent()).toBe('1 reply');
    expect(await page.locator('ol.messages[aria-labelledby] > li').count()).toBe(1);
    // "Reply in thread" brings the page's form under the message, replying in its thread.
    await page.getByRole('link', { name: 'Reply in thread' }).click();
    const form = page.locator(`li:has(> #message-${rootId}) #reply form.reply`);
    await form.waitFor();
    expect(await form.locator('input[name=parent]').inputValue()).toBe(String(rootId));
    expect(await page.locator('#reply-heading').textContent()).toBe('Reply in this thread');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, { path: join(SHOTS, 'thread-inline-375.png'), fullPage: true });
    await page.getByLabel('Your reply').fill('Mine, in the thread too');
    await Promise.all([
      page.waitForURL(`**/c/third/m/${rootId}#message-*`),
      page.getByRole('button', { name: 'Post reply' }).click(),
    ]);
    expect(await page.locator('ol.messages > li').allTextContents()).toEqual([
      expect.stringContaining('Asking the third time'),
      expect.stringContaining('In the thread'),
      expect.stringContaining('Mine, in the thread too'),
    ]);
    await context.close();
  });

  it('moves through the inbox with j and k, and opens a conversation with Enter', async () => {
    const context = await browser.newContext({ bypassCSP: true });
    await context.addCookies([team]);
    const page = await context.newPage();
    await page.goto(`${site}/`);
    expect(await page.locator('.keys-note').isVisible()).toBe(true);
    const focused = () => page.evaluate('document.activeElement?.textContent');
    const titles = await page.locator('ol.inbox .inbox-title a').allTextContents();
    await page.keyboard.press('j');
    expect(await focused()).toBe(titles[0]);
    await page.keyboard.press('j');
    expect(await focused()).toBe(titles[1]);
    await page.keyboard.press('k');
    expect(await focused()).toBe(titles[0]);
    // Typed into the search, j is a letter.
    await page.locator('#inbox-search').press('j');
    expect(await page.locator('#inbox-search').inputValue()).toBe('j');
    await page.locator('ol.inbox .inbox-title a').first().focus();
    await Promise.all([page.waitForURL(/\/c\//), page.keyboard.press('Enter')]);
    await context.close();
  });

  it('shows a new message in an embed inside another site’s frame', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const [stream] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/embeds/conversations/desk/first/events')),
      page.goto(`${blog}/post`),
    ]);
    expect(stream.status()).toBe(200);
    const frame = present(await (await page.waitForSelector('iframe')).contentFrame());
    await reply('first', 'Seen in the frame');
    await frame.getByText('Seen in the frame', { exact: true }).waitFor({ timeout: 5_000 });
    // Its links open the conversation's page in a new tab, as the embed's other messages do.
    const link = frame.locator('article.message', { hasText: 'Seen in the frame' }).locator('a').first();
    expect(await link.getAttribute('target')).toBe('_blank');
    await context.close();
  });

  it("reports a visitor's play of the team's recording once; the author's page shows it live", async () => {
    // Olivia (the team) posts a 3-second video to the third conversation.
    const id = await teamVideo('third', 'Watch this');
    const author = await browser.newContext({ bypassCSP: true });
    await author.addCookies([team]);
    const authorPage = await author.newPage();
    await Promise.all([
      authorPage.waitForResponse((r) => r.url().includes('/c/third/events')),
      authorPage.goto(`${site}/c/third`),
    ]);
    const receipt = authorPage.locator(`#played-${id}`);
    expect(await receipt.textContent()).toBe('Not played yet');

    // A visitor in another browser plays it: past 75 % of it, the page reports the play, once.
    const visitor = await browser.newContext();
    const page = await visitor.newPage();
    const beacons: number[] = [];
    // The beacon: a POST to the message's `played`, its ticket in the address.
    const isBeacon = (r: { url(): string }) => new URL(r.url()).pathname.endsWith(`/messages/${id}/played`);
    page.on('response', (r) => {
      if (isBeacon(r) && r.request().method() === 'POST') beacons.push(r.status());
    });
    await page.goto(`${site}/c/third`);
    // Played muted, as a browser lets a page start a player by itself.
    const video = `document.querySelector('#message-${id} video')`;
    const play = () => page.evaluate(`(() => { const v = ${video}; v.muted = true; return v.play(); })()`);
    await Promise.all([page.waitForResponse(isBeacon), play()]);
    await page.evaluate(
      `new Promise((done) => { const v = ${video}; v.ended ? done(null) : v.addEventListener('ended', () => done(null)); })`,
    );
    expect(beacons).toEqual([204]);
    await expect.poll(() => receipt.textContent(), { timeout: 2_000 }).toBe('Played by 1 visitor');
    // Played again in the same session: reported again, and nothing more.
    await page.reload();
    await Promise.all([page.waitForResponse(isBeacon), play()]);
    await authorPage.reload();
    expect(await authorPage.locator(`#played-${id}`).textContent()).toBe('Played by 1 visitor');
    // The author's mail digest says it, once (the notifier's round, with the batch window at nought).
    await sendNotifications(h.services.notifications, h.services.secrets, { batchSeconds: 0, links: signInLinks });
    const told = (await h.db.orm.em
      .fork()
      .getConnection()
      .execute("select recipient, body from outgoing_mail where body like '%played your%'")) as {
      recipient: string;
      body: string;
    }[];
    expect(told.map((m) => [m.recipient, m.body.split('A visitor played your video recording').length - 1])).toEqual([
      ['olivia@desk.test', 1],
    ]);
    // The author's own page sends no beacon at all.
    expect(await authorPage.locator(`#message-${id} figure[data-play]`).count()).toBe(0);
    await screenshot(authorPage, { path: join(SHOTS, 'played-receipt-1280.png'), fullPage: true });
    await visitor.close();
    await author.close();
  });

  it('marks a reply’s moment on the recording’s timeline, seeks there, and takes the player’s time', async () => {
    const root = await teamVideo('second', 'The plan');
    const visitor = new Visitor(h, site);
    await visitor.get(`/c/second/m/${root}`);
    const answered = await visitor.post('/c/second', {
      csrf: visitor.hidden('csrf'),
      submit: visitor.hidden('submit'),
      parent: String(root),
      text: 'Why here?',
      at: '0:02',
    });
    expect(answered.status).toBe(303);
    const reply = Number(/#message-(\d+)$/.exec(answered.headers.get('location') ?? '')?.[1]);

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${site}/c/second/m/${root}`);
    const mark = page.locator(`ol.moments.timeline a[href="#message-${reply}"]`);
    expect(await mark.textContent()).toBe('0:02');
    // Placed at two thirds of the 3-second recording's timeline.
    expect(await page.locator('ol.moments.timeline li').evaluate((li) => li.getAttribute('style'))).toContain('66.6');
    await mark.click();
    const video = `document.querySelector('#message-${root} video')`;
    await expect.poll(() => page.evaluate(`Math.round(${video}.currentTime)`)).toBe(2);
    // The reply's own "At 0:02" seeks the same player; the form's button takes its time.
    await page.evaluate(`(() => { const v = ${video}; v.pause(); v.currentTime = 1; })()`);
    await page.getByRole('button', { name: "Use the player's time" }).click();
    expect(await page.locator('#reply-at').inputValue()).toBe('0:01');
    await page.locator(`#message-${reply} .moment a`).click();
    await expect.poll(() => page.evaluate(`Math.round(${video}.currentTime)`)).toBe(2);
    await context.close();

    // Without JavaScript: the moments are links to the replies, and the form has no button.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const still = await plain.newPage();
    await still.goto(`${site}/c/second/m/${root}`);
    expect(await still.locator('ol.moments:not(.timeline) a').getAttribute('href')).toBe(`#message-${reply}`);
    expect(await still.getByRole('button', { name: "Use the player's time" }).count()).toBe(0);
    await plain.close();
  });

  it('reacts in place, keeps the focus, and the team’s open page follows live; without JavaScript the form posts', async () => {
    const [asked] = (await h.db.orm.em
      .fork()
      .getConnection()
      .execute("select id from message where text = 'Asking the first time'")) as { id: number }[];
    const id = present(asked).id;
    const teamContext = await browser.newContext();
    await teamContext.addCookies([team]);
    const teamPage = await teamContext.newPage();
    await Promise.all([
      teamPage.waitForResponse((r) => r.url().includes('/c/first/events')),
      teamPage.goto(`${site}/c/first`),
    ]);
    const teamPill = teamPage.locator(`#reactions-${id} .reaction-list button[value="celebrate"]`);
    expect(await teamPill.count()).toBe(0);

    // A visitor (the conversation takes anonymous messages) opens the set and picks 🎉: in place.
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${site}/c/first`);
    await page.evaluate('window.stayed = true');
    await page.locator(`#reactions-${id} a.react-link`).click();
    const choice = page.locator(`#reactions-${id} .picker button[value="celebrate"]`);
    await choice.waitFor();
    // Opened in place, the focus on its first kind.
    expect(await page.evaluate('document.activeElement?.value')).toBe('thumbs_up');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/messages/${id}/reactions`) && r.request().method() === 'POST'),
      choice.click(),
    ]);
    const pill = page.locator(`#reactions-${id} .reaction-list button[value="celebrate"]`);
    await expect.poll(() => pill.getAttribute('aria-pressed')).toBe('true');
    expect(await pill.locator('.reaction-count').textContent()).toBe('1');
    expect(await page.evaluate('window.stayed')).toBe(true);
    // The set stays open, the focus on the same kind's button there; "Done" closes it.
    expect(await page.evaluate('document.activeElement?.value')).toBe('celebrate');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, { path: join(SHOTS, 'reactions-375.png'), fullPage: true });
    await page.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.locator(`#reactions-${id} .picker`).count()).toBe(0);
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('React');
    // The team's page shows it within 2 s, without a reload.
    await expect.poll(() => teamPill.textContent(), { timeout: 2_000 }).toContain('1');
    // Taken back from the pill: gone on both pages.
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/messages/${id}/reactions`) && r.request().method() === 'POST'),
      pill.click(),
    ]);
    await expect.poll(() => pill.count()).toBe(0);
    await expect.poll(() => teamPill.count(), { timeout: 2_000 }).toBe(0);
    // The set's own page, where "React" leads without JavaScript.
    await page.goto(`${site}/c/first/messages/${id}/reactions`);
    expect(await axeViolations(page)).toEqual([]);
    await context.close();

    // Without JavaScript the same buttons post the form, and the page comes back at the message.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const still = await plain.newPage();
    await still.goto(`${site}/c/first`);
    // "React" is the set's own page; a kind there brings the conversation back, at the message.
    await Promise.all([
      still.waitForURL(`**/messages/${id}/reactions`),
      still.locator(`#reactions-${id} a.react-link`).click(),
    ]);
    await Promise.all([
      still.waitForURL(`**/c/first#message-${id}`),
      still.locator(`#reactions-${id} .picker button[value="thumbs_up"]`).click(),
    ]);
    expect(
      await still.locator(`#reactions-${id} .reaction-list button[value="thumbs_up"]`).getAttribute('aria-pressed'),
    ).toBe('true');
    await expect
      .poll(() => teamPage.locator(`#reactions-${id} .reaction-list button[value="thumbs_up"]`).count(), {
        timeout: 2_000,
      })
      .toBe(1);
    await plain.close();
    await teamContext.close();
  });

  it('with JavaScript off, opens no stream and shows the page as loaded', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const streams: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/events')) streams.push(r.url());
    });
    await page.goto(`${site}/c/second`);
    await reply('second', 'Only after a reload');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await page.getByText('Only after a reload').count()).toBe(0);
    expect(streams).toEqual([]);
    await page.reload();
    expect(await page.getByText('Only after a reload').count()).toBe(1);
    await context.close();
  });
});
