import type { AddressInfo } from 'node:net';
import { loadSeed } from '@convo/db';
import { serve } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, warnIfNoChromium } from './support/chromium.ts';
import { type Harness, openHarness } from './support/harness.ts';
import { deliverMailTo, type Mailbox, signInLink } from './support/mailbox.ts';

/*
 * People replying and signing in with a real browser (Debian's Chromium, JavaScript off: the forms
 * are plain HTML), the sign-in mail received by a real SMTP server, every message read back
 * through the REST API.
 */

warnIfNoChromium('replies-browser.test.ts');

const TOKEN = 'browser-replies-token-0123456789';

let h: Harness;
let server: ReturnType<typeof serve>;
let port: number;
let site: string;
let browser: Browser;
let mailbox: Mailbox;
let stopMail: () => Promise<void>;

const lastMessage = async (slug: string) => {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/conversations/get_conversation?slug=${slug}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const body = (await res.json()) as { messages: { id: number; text: string; author: Record<string, unknown> }[] };
  return body.messages.at(-1);
};

beforeAll(async () => {
  if (!hasChromium) return;
  h = await openHarness();
  const delivery = await deliverMailTo(h.services);
  mailbox = delivery.mailbox;
  stopMail = delivery.close;
  server = serve({ fetch: (req) => h.app.fetch(req), port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
  site = `http://talk.test:${port}`;
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'talk',
        name: 'Talk',
        host: site,
        owner: 'olivia@talk.example',
        users: [
          { email: 'olivia@talk.example', name: 'Olivia Owner' },
          { email: 'nora@talk.example', name: 'Nora Nonmember' },
        ],
        tokens: [{ name: 'browser', token: TOKEN }],
        conversations: [
          { title: 'Open to all', slug: 'open', allow_anonymous_messages: true, members: ['olivia@talk.example'] },
          { title: 'Names please', slug: 'named', allow_anonymous_messages: false, members: ['olivia@talk.example'] },
          { title: 'Staff only', slug: 'private', anyone_can_post: false, members: ['olivia@talk.example'] },
        ],
      },
    ],
  });
  browser = await launchChromium(['talk.test']);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopMail?.();
  if (server) await new Promise((r) => server.close(r));
  await h?.close();
});

/** A browser profile of its own (cookies and all), with JavaScript off. */
const person = async () => (await browser.newContext({ javaScriptEnabled: false })).newPage();

async function signIn(email: string) {
  const page = await person();
  await page.goto(`${site}/c/open`);
  await page.getByRole('link', { name: 'Sign in' }).first().click();
  await page.getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send me a link' }).click();
  expect(await page.locator('h1').textContent()).toBe('Check your e-mail');
  await page.goto(signInLink(await mailbox.next(email)));
  // The link's page changes nothing until its button is pressed.
  expect(await page.locator('h1').textContent()).toBe('Sign in');
  await page.getByRole('button', { name: 'Sign in' }).click();
  expect(new URL(page.url()).pathname).toBe('/c/open');
  expect(await page.getByText(/^Signed in as /).textContent()).toContain('Signed in as');
  return page;
}

describe.skipIf(!hasChromium)('replying and signing in, in Chromium with JavaScript off', () => {
  it('an anonymous reply on an open conversation lands at its anchor and is in the API', async () => {
    const page = await person();
    await page.goto(`${site}/c/open`);
    await page.getByLabel('Your reply').fill('Hello from a browser');
    await page.getByRole('button', { name: 'Post reply' }).click();
    const m = await lastMessage('open');
    expect(m).toMatchObject({ text: 'Hello from a browser', author: { anonymous: true } });
    expect(page.url()).toBe(`${site}/c/open#message-${m?.id}`);
    expect(await page.locator(`#message-${m?.id} .text`).textContent()).toBe('Hello from a browser');
    // Reloading the page the post redirected to does not post again.
    await page.reload();
    expect((await lastMessage('open'))?.id).toBe(m?.id);
    await page.context().close();
  }, 60_000);

  it('a registered reply where anonymous ones are refused', async () => {
    const page = await person();
    await page.goto(`${site}/c/named`);
    await page.getByLabel('Name').fill('Rita Replier');
    await page.getByLabel('E-mail').fill('rita@else.example');
    await page.getByLabel('Your reply').fill('Signed with my name');
    await page.getByRole('button', { name: 'Post reply' }).click();
    expect(await page.locator('h1').textContent()).toBe('Check your e-mail');
    expect((await lastMessage('named'))?.text).not.toBe('Signed with my name');
    // The mail shows the reply; its link's page shows it again, and its button posts it.
    await page.goto(signInLink(await mailbox.next('rita@else.example')));
    expect(await page.locator('blockquote').textContent()).toBe('Signed with my name');
    expect(await page.getByLabel('Your name').inputValue()).toBe('Rita Replier');
    await page.getByRole('button', { name: 'Post my reply and sign in' }).click();
    const m = await lastMessage('named');
    expect(m).toMatchObject({
      text: 'Signed with my name',
      author: { anonymous: false, name: 'Rita Replier', email: 'rita@else.example' },
    });
    expect(await page.locator(`#message-${m?.id} .author`).textContent()).toBe('Rita Replier');
    expect(await page.content()).not.toContain('rita@else.example');
    await page.context().close();
  }, 60_000);

  it('signs in by the mailed link; a member sees and answers the private conversation, an outsider gets 404', async () => {
    const member = await signIn('olivia@talk.example');
    const response = await member.goto(`${site}/c/private`);
    expect(response?.status()).toBe(200);
    await member.getByLabel('Your reply').fill('For staff eyes');
    await member.getByRole('button', { name: 'Post reply' }).click();
    expect(await lastMessage('private')).toMatchObject({
      text: 'For staff eyes',
      author: { anonymous: false, name: 'Olivia Owner' },
    });

    const outsider = await signIn('nora@talk.example');
    expect((await outsider.goto(`${site}/c/private`))?.status()).toBe(404);
    const anonymous = await person();
    expect((await anonymous.goto(`${site}/c/private`))?.status()).toBe(404);

    await member.getByRole('button', { name: 'Sign out', exact: true }).click();
    expect((await member.goto(`${site}/c/private`))?.status()).toBe(404);
    for (const p of [member, outsider, anonymous]) await p.context().close();
  }, 90_000);
});
