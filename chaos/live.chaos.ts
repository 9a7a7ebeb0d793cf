import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, hasChromium, launchChromium, warnIfNoChromium } from '../apps/api/test/support/chromium.ts';
import { request, sleep } from './support/load.ts';
import { type Balancer, startNginx } from './support/nginx.ts';
import { startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { cli, type ServerProcess, startServer } from './support/server.ts';

/*
 * Live conversations across replicas, as people see them: two server processes on one PostgreSQL
 * behind the scale test's nginx, and two Chromium contexts, each pinned to its own process. One
 * posts from the page's form; the other sees the message appear within a second without reloading
 * (the fan-out crosses processes through LISTEN/NOTIFY). Then PostgreSQL restarts: the message
 * posted as it comes back still arrives (the listener reconnects and the process reads what it
 * missed from the database). Then the watcher's process stops: its stream is ended with a retry
 * hint, the browser comes back through nginx to the other process, and misses nothing.
 */

warnIfNoChromium('live.chaos.ts');

const HOST = 'live.test';

let db: ThrowawayPostgres;
let servers: ServerProcess[] = [];
let balancer: Balancer;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  db = await startThrowawayPostgres();
  const made = cli(db.url, [
    'account',
    'create',
    '--key',
    'live',
    '--name',
    'Live Desk',
    '--host',
    `http://${HOST}`,
    '--owner-email',
    'olivia@live.example',
    '--owner-name',
    'Olivia',
  ]);
  servers = await Promise.all([1, 2].map(() => startServer(db.url, { TRUST_PROXY: '1', LOG_LEVEL: 'warn' })));
  const created = await request('create', `${servers[0]?.baseUrl}/api/v1/conversations/create_conversation`, {
    method: 'POST',
    headers: { authorization: `Bearer ${made.token.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Live', slug: 'live', anyone_can_post: true, allow_anonymous_messages: true }),
  });
  expect(created.status).toBe(201);
  balancer = await startNginx(
    servers.map((s) => Number(new URL(s.baseUrl).port)),
    { pinByCookie: true },
  );
  // live.test is nginx, on its port, to the browser (whose origin is then plain http://live.test).
  browser = await launchChromium([], [`--host-resolver-rules=MAP ${HOST} 127.0.0.1:${balancer.port}`]);
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await balancer?.stop();
  for (const s of servers) await s.kill();
  db?.destroy();
});

/**
 * A browser context whose requests nginx sends to replica `n` (1 or 2), `width` px wide (axe is
 * injected as a script, which the page's policy rightly forbids: the context bypasses it).
 */
async function on(replica: number, width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
  contexts.push(context);
  await context.addCookies([{ name: 'replica', value: String(replica), domain: HOST, path: '/' }]);
  return context.newPage();
}

/** Opens the conversation; resolves once its live stream is open, with the replica that holds it. */
async function watch(page: Page): Promise<string> {
  const [stream] = await Promise.all([
    page.waitForResponse((r) => r.url().includes('/c/live/events')),
    page.goto(`http://${HOST}/c/live`),
  ]);
  expect(stream.status()).toBe(200);
  return (await stream.allHeaders())['x-upstream'] ?? '';
}

/** Posts a reply from the page's form (again while the server answers it 503); when its 303 came. */
async function post(page: Page, text: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    await page.goto(`http://${HOST}/c/live`);
    await page.getByLabel('Your reply').fill(text);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Post reply' }).click(),
    ]);
    if (answer.status() === 303) return Date.now();
    if (attempt >= 40) throw new Error(`the reply was answered ${answer.status()} ${attempt} times`);
    await sleep(250);
  }
}

/** How long after `since` the message shows on `page`. */
async function shownAfter(page: Page, text: string, since: number, timeout = 10_000): Promise<number> {
  await page.getByText(text, { exact: true }).waitFor({ timeout });
  return Date.now() - since;
}

describe.skipIf(!hasChromium)('a conversation open in two browsers on two replicas', { timeout: 180_000 }, () => {
  let poster: Page;
  let watcher: Page;

  it('shows one’s reply to the other within a second, without reloading', async () => {
    poster = await on(1, 1280);
    watcher = await on(2, 375);
    const [posting, watching] = [await watch(poster), await watch(watcher)];
    expect(posting).toBe(new URL(servers[0]?.baseUrl ?? '').host);
    expect(watching).toBe(new URL(servers[1]?.baseUrl ?? '').host);
    await watcher.evaluate('window.notReloaded = true');

    for (const text of ['Hello from the first replica', 'And a second one']) {
      const at = await post(poster, text);
      const ms = await shownAfter(watcher, text, at);
      console.log(`live: shown on the other replica ${ms} ms after the post was answered`);
      expect(ms).toBeLessThan(1_000);
    }
    expect(await watcher.evaluate('window.notReloaded')).toBe(true);
    // Announced to screen readers, politely.
    await watcher.locator('#live-status', { hasText: 'New message from Anonymous' }).waitFor({ state: 'attached' });
    expect(await watcher.locator('#live-status').getAttribute('aria-live')).toBe('polite');
    // The message it put in place reads as the others do, at 375 px as at 1280 px.
    expect(await axeViolations(watcher)).toEqual([]);
    expect(await watcher.evaluate('document.documentElement.scrollWidth > window.innerWidth')).toBe(false);
    const shots = join(tmpdir(), 'convo-pages');
    mkdirSync(shots, { recursive: true });
    await watcher.screenshot({ path: join(shots, 'live-375.png'), fullPage: true });
    await poster.reload();
    await poster.screenshot({ path: join(shots, 'live-1280.png'), fullPage: true });
  });

  it('delivers the message posted as PostgreSQL comes back from a restart', async () => {
    db.stop();
    await sleep(1_500);
    db.start();
    const text = 'Posted as the database came back';
    const at = await post(poster, text);
    const ms = await shownAfter(watcher, text, at);
    console.log(`live: the message posted as PostgreSQL came back shown ${ms} ms after it was answered`);
    expect(ms).toBeLessThan(5_000);
    // Once the listener is back, as quick as before.
    await sleep(6_000);
    const after = 'After the restart';
    expect(await shownAfter(watcher, after, await post(poster, after))).toBeLessThan(1_000);
    expect(await watcher.evaluate('window.notReloaded')).toBe(true);
  });

  it('moves the watcher to the other replica when its own stops, missing nothing', async () => {
    // Unpinned, the browser's reconnection goes wherever nginx sends it.
    await watcher.context().clearCookies();
    const moved = watcher.waitForResponse(
      (r) =>
        // nginx names each replica it tried: the stopped one may come first.
        r.url().includes('/c/live/events') &&
        (r.headers()['x-upstream'] ?? '').endsWith(new URL(servers[0]?.baseUrl ?? '').host),
      { timeout: 20_000 },
    );
    await servers[1]?.kill('SIGTERM');
    const text = 'While the watcher moved';
    await post(poster, text);
    await moved;
    await watcher.getByText(text, { exact: true }).waitFor({ timeout: 10_000 });
    expect(await watcher.evaluate('window.notReloaded')).toBe(true);
  });
});
