import type { AddressInfo } from 'node:net';
import { loadSeed } from '@convo/db';
import { serve } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { hasChromium, launchChromium, warnIfNoChromium } from './support/chromium.ts';
import { type Harness, openHarness } from './support/harness.ts';
import { deliverMailTo, type Mailbox, signInLink } from './support/mailbox.ts';
import { mailTo, oneClick, unsubscribeLink } from './support/people.ts';

/*
 * The people side end to end, as people do it in Chromium, with JavaScript off and on: a visitor
 * signs up from a private conversation's 404 and lands on it once the team adds them; anonymous
 * replies reach the members as one batched mail (a real SMTP server receives it); one click on
 * its unsubscribe link stops the next; the team's inbox shows the conversation unread, then read.
 */

warnIfNoChromium('people-browser.test.ts');

/** Longer than three replies take through a browser, so they fall in one batch. */
const BATCH_SECONDS = 4;

let h: Harness;
let server: ReturnType<typeof serve>;
let site: string;
let browser: Browser;
let mailbox: Mailbox;
let stopMail: () => Promise<void>;
let notify: QueueWorker;

beforeAll(async () => {
  if (!hasChromium) return;
  h = await openHarness({ app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } } });
  const delivery = await deliverMailTo(h.services);
  mailbox = delivery.mailbox;
  stopMail = delivery.close;
  notify = startNotifyWorker(h.services.notifications, h.services.secrets, {
    batchSeconds: BATCH_SECONDS,
    logger: createLogger('silent'),
    intervalMs: 100,
  });
  server = serve({ fetch: (req) => h.app.fetch(req), port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  site = `http://people.test:${(server.address() as AddressInfo).port}`;
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'people',
        name: 'People',
        host: site,
        owner: 'olivia@people.example',
        users: [{ email: 'olivia@people.example', name: 'Olivia Owner' }],
        conversations: [false, true].flatMap((js) => [
          { title: `Private ${js}`, slug: `private-${js}`, anyone_can_post: false, members: ['olivia@people.example'] },
          { title: `Open ${js}`, slug: `open-${js}`, members: ['olivia@people.example'] },
        ]),
      },
    ],
  });
  browser = await launchChromium(['people.test']);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await notify?.stop();
  await stopMail?.();
  if (server) await new Promise((r) => server.close(r));
  await h?.close();
});

const settle = () => new Promise((r) => setTimeout(r, BATCH_SECONDS * 1000 + 1500));

describe.skipIf(!hasChromium).each([false, true])('the people side in Chromium, JavaScript %s', (js) => {
  const person = async (): Promise<Page> => (await browser.newContext({ javaScriptEnabled: js })).newPage();
  const visitor = `vera-${js}@else.example`;
  let owner: Page;

  it('a visitor signs up from a private conversation’s 404 and lands on it once the team adds them', async () => {
    const page = await person();
    const missing = await page.goto(`${site}/c/private-${js}`);
    expect(missing?.status()).toBe(404);
    await page.getByRole('link', { name: 'Sign in' }).first().click();
    await page.getByLabel('E-mail').fill(visitor);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    expect(await page.locator('h1').textContent()).toBe('Check your e-mail');
    await page.goto(signInLink(await mailTo(mailbox, visitor, /\/sign-in\//)));
    await page.getByLabel('Your name').fill('Vera Visitor');
    await page.getByRole('button').filter({ hasText: /sign/i }).first().click();
    // Back where she was: still the 404, since she is not a member yet.
    expect(new URL(page.url()).pathname).toBe(`/c/private-${js}`);
    expect(await page.locator('h1').textContent()).not.toBe(`Private ${js}`);

    owner = await person();
    await owner.goto(`${site}/sign-in?return=/c/private-${js}`);
    await owner.getByLabel('E-mail').fill('olivia@people.example');
    await owner.getByRole('button', { name: 'Send me a link' }).click();
    await owner.goto(signInLink(await mailTo(mailbox, 'olivia@people.example', /\/sign-in\//)));
    await owner.getByRole('button', { name: 'Sign in' }).click();
    expect(new URL(owner.url()).pathname).toBe(`/c/private-${js}`);
    await owner.getByLabel('E-mail of the person to add').fill(visitor);
    await owner.getByRole('button', { name: 'Add and tell them by e-mail' }).click();
    expect(await owner.locator('.member-admin').textContent()).toContain('Vera Visitor');

    const invitation = await mailTo(mailbox, visitor, /You were added/);
    expect(invitation.text).toContain(`${site}/c/private-${js}`);
    const opened = await page.goto(`${site}/c/private-${js}`);
    expect(opened?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe(`Private ${js}`);
    await page.context().close();
  }, 90_000);

  it('three anonymous replies reach the members as one mail; one click on its link stops the next', async () => {
    const stranger = await person();
    for (const text of ['One', 'Two', 'Three']) {
      await stranger.goto(`${site}/c/open-${js}`);
      await stranger.getByLabel('Your reply').fill(`Reply ${text} (${js})`);
      await stranger.getByRole('button', { name: 'Post reply' }).click();
    }
    const mail = await mailTo(mailbox, 'olivia@people.example', new RegExp(`Open ${js}`));
    for (const text of ['One', 'Two', 'Three']) expect(mail.text).toContain(`> Reply ${text} (${js})`);
    await settle();
    expect(
      mailbox.mails.filter((m) => m.to.includes('olivia@people.example') && m.text.includes(`Open ${js}`)),
    ).toEqual([]);

    // The mail provider's one-click POST (RFC 8058): no cookie, no form token. (people.test is
    // only the browser's name for this machine, so it is handed to the server's app directly.)
    const clicked = await oneClick(h, unsubscribeLink(mail));
    expect(clicked.status).toBe(200);
    await stranger.goto(`${site}/c/open-${js}`);
    await stranger.getByLabel('Your reply').fill(`Reply Four (${js})`);
    await stranger.getByRole('button', { name: 'Post reply' }).click();
    await settle();
    expect(
      mailbox.mails.filter((m) => m.to.includes('olivia@people.example') && m.text.includes(`Open ${js}`)),
    ).toEqual([]);
    await stranger.context().close();
  }, 90_000);

  it('the team’s inbox shows the conversation unread, then read once opened', async () => {
    await owner.goto(`${site}/`);
    const row = owner.locator('.inbox > li', { hasText: `Open ${js}` });
    expect(await row.getAttribute('class')).toBe('unread');
    expect(await row.textContent()).toContain('Unread');
    await row.getByRole('link', { name: `Open ${js}` }).click();
    expect(new URL(owner.url()).pathname).toBe(`/c/open-${js}`);
    await owner.goto(`${site}/`);
    expect(await owner.locator('.inbox > li', { hasText: `Open ${js}` }).getAttribute('class')).toBe('read');
    await owner.context().close();
  }, 60_000);
});
