import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSeed } from '@convo/db';
import { serve } from '@hono/node-server';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { startWorkflowWorker } from '../src/workers/workflows.ts';
import {
  axeViolations,
  FAKE_MEDIA_DEVICES,
  hasChromium,
  launchChromium,
  screenshot,
  warnIfNoChromium,
} from './support/chromium.ts';
import { apiCall, auth, type Harness, openHarness } from './support/harness.ts';
import { deliverMailTo, type Mailbox, signInLink } from './support/mailbox.ts';

/*
 * A visitor starts a conversation as people do, in Chromium with a synthetic microphone: the
 * primary intake page at `/` (text and 3 s of recorded audio), and a secondary page's embed inside
 * another site's iframe. The API then has the private conversation through the page, with the
 * workflow's welcome posted by the worker, and the page's team member got the notification mail
 * from the real SMTP server.
 */

warnIfNoChromium('intake-browser.test.ts');

const TOKEN = 'intake-browser-token-0123456789';
const SHOTS = join(tmpdir(), 'convo-pages');
const WELCOME = 'Thanks for writing! Sam here: we answer within a working day.';

let h: Harness;
let server: ReturnType<typeof serve>;
let blogServer: ReturnType<typeof serve>;
let site: string;
let blog: string;
let browser: Browser;
let mailbox: Mailbox;
let stopMail: () => Promise<void>;
const workers: QueueWorker[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  h = await openHarness({ app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } } });
  const delivery = await deliverMailTo(h.services);
  mailbox = delivery.mailbox;
  stopMail = delivery.close;
  const logger = createLogger('silent');
  workers.push(startWorkflowWorker(h.services.workflowJobs, { logger, intervalMs: 100 }));
  workers.push(
    startNotifyWorker(h.services.notifications, h.services.secrets, {
      batchSeconds: 0,
      logger,
      onQueued: delivery.kick,
    }),
  );
  server = serve({ fetch: (req) => h.app.fetch(req), port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  site = `http://front.test:${port}`;
  // Another site, on a server of its own, whose page frames the embed.
  blogServer = serve({
    fetch: () =>
      new Response(
        `<!doctype html><html lang="en"><title>Blog</title><h1>Our blog</h1>
<iframe title="Feedback" src="${site}/embeds/p/feedback" allow="microphone; camera; display-capture" width="600" height="900"></iframe>
<script>window.told = []; addEventListener('message', (e) => window.told.push(e.data));</script>`,
        { headers: { 'content-type': 'text/html; charset=utf-8' } },
      ),
    port: 0,
    hostname: '127.0.0.1',
  });
  await new Promise((r) => blogServer.once('listening', r));
  blog = `http://blog.test:${(blogServer.address() as AddressInfo).port}`;
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'front',
        name: 'Front Desk',
        host: site,
        owner: 'olivia@front.test',
        users: [
          { email: 'olivia@front.test', name: 'Olivia Owner' },
          { email: 'sam@front.test', name: 'Sam Support', team: 'member' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        workflows: [
          {
            name: 'Welcome',
            steps: [
              {
                trigger: { type: 'conversation.created' },
                action: { type: 'post_message', as: 'sam@front.test', text: WELCOME },
              },
            ],
          },
        ],
        intake_pages: [
          {
            name: 'Contact',
            primary: true,
            workflow: 'Welcome',
            title: 'Talk to the front desk',
            welcome_text: 'Tell us what you need: write, or record your voice.',
            team: ['sam@front.test'],
          },
          {
            name: 'Feedback',
            key: 'feedback',
            workflow: 'Welcome',
            welcome_text: 'How did we do?',
            team: ['sam@front.test'],
          },
        ],
      },
    ],
  });
  // Microphones are offered to secure origins only: an account host is https in production.
  browser = await launchChromium(
    ['front.test', 'blog.test'],
    [...FAKE_MEDIA_DEVICES, `--unsafely-treat-insecure-origin-as-secure=${site},${blog}`],
  );
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const w of workers) await w.stop();
  if (server) await new Promise((r) => server.close(r));
  if (blogServer) await new Promise((r) => blogServer.close(r));
  await stopMail?.();
  await h?.close();
});

interface ApiConversation {
  slug: string;
  via_primary_intake_page: boolean;
  intake_page_id: number | null;
  public: boolean;
  users: { email: string }[];
  messages: { message_type: string; recorded_duration_seconds: number; text: string; author: { name?: string } }[];
  workflow: { name?: string; steps?: { state: string }[] };
}

const conversation = async (slug: string): Promise<ApiConversation> =>
  (await apiCall(h, 'GET', `/conversations/get_conversation?slug=${slug}`, auth(TOKEN))).body;

/** The conversation once the workflow's welcome is in it (the worker posts it within seconds). */
async function welcomed(slug: string): Promise<ApiConversation> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const c = await conversation(slug);
    if (c.messages.some((m) => m.text === WELCOME) || Date.now() > deadline) return c;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Fills the intake form in `at` (a page or a frame), records about 3 s of audio, and submits. */
async function startWithRecording(at: Page | Frame, who: { name: string; email: string; text: string }) {
  await at.getByLabel('Name').fill(who.name);
  await at.getByLabel('E-mail').fill(who.email);
  await at.getByLabel('Your message').fill(who.text);
  await at.getByRole('button', { name: 'Record audio' }).click();
  await at.getByRole('button', { name: 'Start recording' }).click();
  await at.getByText(/Recording 0:0\d of/).waitFor({ timeout: 6_000 });
  await new Promise((r) => setTimeout(r, 3_000));
  await at.getByRole('button', { name: 'Stop' }).click();
  await at.getByText(/Recorded 0:0\d/).waitFor();
  await at.getByRole('button', { name: 'Start the conversation' }).click();
}

const slugIn = (url: string) => /\/(?:c|embeds\/conversations\/front)\/([\w-]+)/.exec(url)?.[1] ?? '';

describe.skipIf(!hasChromium)('starting a conversation in Chromium', { timeout: 90_000 }, () => {
  it('at /: types, records 3 s of audio, lands on the private conversation; the team is told', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${site}/`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Talk to the front desk');
    await startWithRecording(page, { name: 'Vera Visitor', email: 'vera@visitor.test', text: 'My parcel is lost.' });
    await page.waitForURL(/\/c\/[\w-]+#message-\d+$/);
    await page.locator('audio[src^="/media/front/"]').waitFor();
    await expect(page.getByText('My parcel is lost.', { exact: true }).count()).resolves.toBe(1);

    const c = await welcomed(slugIn(page.url()));
    expect(c).toMatchObject({ via_primary_intake_page: true, intake_page_id: null, public: false });
    expect(c.workflow.name).toBe('Welcome');
    expect(c.workflow.steps?.[0]?.state).toBe('done');
    // Under the name she gave, not verified until she opens the mailed link.
    expect(c.users.map((u) => u.email)).toEqual(['sam@front.test']);
    await expect(page.getByText('Vera Visitor (not verified)').count()).resolves.toBe(1);
    const [first, second] = c.messages;
    expect(first).toMatchObject({ message_type: 'audio', text: 'My parcel is lost.', author: { anonymous: true } });
    expect(first?.recorded_duration_seconds).toBeGreaterThanOrEqual(2);
    expect(first?.recorded_duration_seconds).toBeLessThanOrEqual(4);
    expect(second).toMatchObject({ text: WELCOME, author: { name: 'Sam Support' } });

    // Sam, named by the page, is told of Vera's message by mail; Vera got her link back.
    const told = await mailbox.next('sam@front.test');
    expect(told.text).toMatch(/> \(an audio recording\)\r?\n> My parcel is lost\./);
    expect(told.text).toContain('Vera Visitor (not verified)');
    expect((await mailbox.next('vera@visitor.test')).text).toContain(`${site}/c/${c.slug}`);

    // The device knows her: the page opens again later, the welcome shown.
    await page.goto(`${site}/c/${c.slug}`);
    await expect(page.getByText(WELCOME).count()).resolves.toBe(1);
    await context.close();
  });

  it('in another site’s iframe: the secondary page’s embed starts it and shows it in the frame', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${blog}/post`);
    const frame = await (await page.waitForSelector('iframe')).contentFrame();
    if (!frame) throw new Error('the embed did not load');
    await frame.getByText('How did we do?').waitFor();
    await startWithRecording(frame, { name: 'Fran Frame', email: 'fran@visitor.test', text: 'Lovely blog.' });
    // It lands with a one-time code, taken at once; the address forgets it.
    await frame.waitForURL(/\/embeds\/conversations\/front\/[\w-]+(#message-\d+)?$/);
    await frame.getByText('Lovely blog.', { exact: true }).waitFor();
    // The site around it is told the frame's height, and nothing else (no address, no pass).
    const told: unknown[] = await page.evaluate(() => Reflect.get(globalThis, 'told'));
    expect(told.length).toBeGreaterThan(0);
    for (const message of told) expect(Object.keys(message as object).sort()).toEqual(['height', 'type']);

    const c = await welcomed(slugIn(frame.url()));
    expect(c).toMatchObject({ via_primary_intake_page: false, public: false });
    expect(c.intake_page_id).toBeGreaterThan(0);
    expect(c.messages[0]).toMatchObject({ message_type: 'audio', text: 'Lovely blog.' });
    expect(c.messages.map((m) => m.text)).toContain(WELCOME);
    expect((await mailbox.next('sam@front.test')).text).toContain('Lovely blog.');
    await context.close();
  });

  it('with JavaScript off, the page still starts a conversation from typed text', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${site}/p/feedback`);
    await expect(page.getByRole('button', { name: 'Record audio' }).count()).resolves.toBe(0);
    await page.getByLabel('Name').fill('Nico');
    await page.getByLabel('E-mail').fill('nico@visitor.test');
    await page.getByLabel('Your message').fill('No scripts here.');
    await Promise.all([
      page.waitForURL(/\/c\/[\w-]+#message-\d+$/),
      page.getByRole('button', { name: 'Start the conversation' }).click(),
    ]);
    await expect(page.getByText('No scripts here.', { exact: true }).count()).resolves.toBe(1);
    await context.close();
  });

  it('reads well at 375 px and 1280 px, and axe finds nothing (screenshots in the temp folder)', async () => {
    mkdirSync(SHOTS, { recursive: true });
    // The primary page shows a welcome recording: the first recording the tests above sent.
    const [recorded] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute('select id from message where media_key is not null order by id limit 1');
    if (recorded) {
      const contact = (await apiCall(h, 'GET', '/intake_pages', auth(TOKEN))).body.intake_pages[0];
      await apiCall(h, 'PATCH', `/intake_pages/${contact.id}`, auth(TOKEN), {
        welcome_recording_message_id: recorded.id,
      });
    }
    // The team's pages, as Sam sees them once signed in by the mailed link.
    const team = await browser.newContext({ bypassCSP: true });
    const signIn = await team.newPage();
    await signIn.goto(`${site}/sign-in`);
    await signIn.getByLabel('E-mail').fill('sam@front.test');
    await signIn.getByRole('button', { name: 'Send me a link' }).click();
    // Sam's mail holds the notifications of the starts above too: the sign-in link is the one asked for now.
    let link = '';
    while (!link) {
      const mail = await mailbox.next('sam@front.test');
      if (/^Subject: Sign in to/m.test(mail.text)) link = signInLink(mail);
    }
    await signIn.goto(link);
    await Promise.all([signIn.waitForURL(`${site}/`), signIn.getByRole('button', { name: 'Sign in' }).click()]);
    const session = await team.storageState();
    await team.close();
    for (const width of [375, 1280]) {
      for (const path of ['/', '/embeds/p/feedback', '/manage/intake-pages', '/manage/workflows']) {
        const context = await browser.newContext({
          bypassCSP: true,
          viewport: { width, height: 900 },
          ...(path.startsWith('/manage/') ? { storageState: session } : {}),
        });
        const page = await context.newPage();
        await page.goto(`${site}${path}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        expect(await axeViolations(page)).toEqual([]);
        expect(await page.evaluate('document.documentElement.scrollWidth > window.innerWidth')).toBe(false);
        const name = path === '/' ? 'intake' : path.slice(1).replaceAll('/', '-');
        await screenshot(page, { path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
        await context.close();
      }
    }
  });
});
