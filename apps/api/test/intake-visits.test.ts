import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSeed } from '@convo/db';
import { advanceWorkflows } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { apiCall, auth, type Harness, openHarness, secondApp } from './support/harness.ts';
import { deliverMailTo, type Mailbox, signInLink } from './support/mailbox.ts';
import { mailTo } from './support/people.ts';
import { attr, elements, present, textOf, Visitor } from './support/site.ts';
import { awayFromWindowEnd } from './support/windows.ts';

/*
 * Intake pages as visitors use them: the primary page at `/`, a secondary one at `/p/<key>` and
 * its embed; starting a private conversation with the page's team (text, a recording, or both),
 * landing on it, coming back on this device and through the mailed link; and every refusal.
 */

const HOST = 'https://front.example.com';
const OTHER_HOST = 'https://elsewhere.example.com';
const TOKEN = 'front-site-token-0123456789';

let h: Harness;
let mailbox: Mailbox;
let stopMail: () => Promise<void>;
let notify: QueueWorker;

beforeAll(async () => {
  h = await openHarness({ app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } } });
  const delivery = await deliverMailTo(h.services);
  mailbox = delivery.mailbox;
  stopMail = delivery.close;
  // The notification round makes a visitor's link back, woken by each start as in a server process.
  notify = startNotifyWorker(h.services.notifications, h.services.secrets, {
    batchSeconds: 3600,
    logger: createLogger('silent'),
    onQueued: delivery.kick,
  });
  h.services.onIntakeStarted(notify.kick);
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'front',
        name: 'Front Desk',
        host: HOST,
        owner: 'olivia@front.example',
        users: [
          { email: 'olivia@front.example', name: 'Olivia Owner' },
          { email: 'sam@front.example', name: 'Sam Support', team: 'member' },
          { email: 'pat@customer.example', name: 'Pat Customer' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        workflows: [
          {
            name: 'Welcome',
            steps: [
              {
                trigger: { type: 'conversation.created' },
                action: { type: 'add_tags', tags: ['new'] },
              },
            ],
          },
        ],
        intake_pages: [
          {
            name: 'Contact',
            key: 'contact',
            primary: true,
            workflow: 'Welcome',
            title: 'Talk to the front desk',
            welcome_text: 'Tell us what you need.\n\nWe answer within a day: see front.example.com.',
            team: ['sam@front.example'],
          },
          { name: 'Feedback', key: 'feedback', allow_anonymous: true, team: ['sam@front.example'] },
          { name: 'Old form', key: 'old', disabled: true },
        ],
      },
      {
        key: 'elsewhere',
        name: 'Elsewhere',
        host: OTHER_HOST,
        owner: 'eve@elsewhere.example',
        users: [{ email: 'eve@elsewhere.example', name: 'Eve' }],
        intake_pages: [{ name: 'Only theirs', key: 'theirs', primary: true }],
      },
    ],
  });
});
afterAll(async () => {
  await notify?.stop();
  await stopMail?.();
  await h?.close();
});

const api = async (slug: string) =>
  (await apiCall(h, 'GET', `/conversations/get_conversation?slug=${slug}`, auth(TOKEN))).body;

const count = async (table: string) =>
  Number((await h.db.orm.em.fork().getConnection().execute(`select count(*)::int as n from ${table}`))[0].n);

/**
 * The links back made and asked for: a start under an address asks with its event, which the
 * notification round turns into the link (kept once its mail is sent), so the sum does not move
 * while the worker runs.
 */
const comeBacks = async () =>
  (await count('sign_in_link')) + (await count('notify_event where come_back_email is not null'));

const location = (p: { headers: Headers }) => p.headers.get('location') ?? '';
const slugOf = (p: { headers: Headers }) => present(/\/c(?:onversations\/front)?\/([\w-]+)/.exec(location(p))?.[1]);

/** Opens the intake page at `path` and posts its form with `fields` (the page's own tokens added). */
/** A start that landed on its conversation (303 to `/c/<slug>#message-<id>`): its slug. */
function landed(posted: { status: number; headers: Headers }): string {
  expect(posted.status).toBe(303);
  const slug = slugOf(posted);
  expect(location(posted)).toMatch(new RegExp(`^/c/${slug}#message-\\d+$`));
  return slug;
}

async function start(v: Visitor, path: string, fields: Record<string, string>) {
  await v.get(path);
  return v.post(path, { csrf: v.hidden('csrf'), submit: v.hidden('submit'), ...fields });
}

/** A mail with a sign-in link (the team's notifications go to the same mailbox). */
const SIGN_IN = /\/sign-in\//;

const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;

/** A visitor signed in through the mailed link. */
async function signedIn(email: string, host = HOST): Promise<Visitor> {
  const v = new Visitor(h, host);
  await v.get('/sign-in');
  await v.post('/sign-in', { csrf: v.hidden('csrf'), email, return: '/' });
  expect((await v.confirm(signInLink(await mailTo(mailbox, email, SIGN_IN)))).status).toBe(303);
  return v;
}

describe('the primary intake page at /', () => {
  it('shows the title, the welcome and the form to a visitor', async () => {
    const v = new Visitor(h, HOST);
    const page = await v.get('/');
    expect(page.status).toBe(200);
    const els = elements(page.html);
    expect(textOf(present(els.find((e) => e.tagName === 'h1')))).toBe('Talk to the front desk');
    expect(page.html).toContain('Tell us what you need.');
    expect(els.some((e) => e.tagName === 'a' && attr(e, 'href') === 'http://front.example.com/')).toBe(true);
    const form = present(els.find((e) => e.tagName === 'form' && attr(e, 'action') === '/#start'));
    expect(attr(form, 'enctype')).toBe('multipart/form-data');
    for (const name of ['name', 'email', 'text', 'media']) {
      expect(els.some((e) => attr(e, 'name') === name)).toBe(true);
    }
    expect(page.headers.get('set-cookie')).toContain('convo_visitor=');
  });

  it('starts a private conversation with the page team, lands on it and mails a link back', async () => {
    const v = new Visitor(h, HOST);
    const posted = await start(v, '/', {
      name: 'Vera Visitor',
      email: 'Vera@Visitor.example',
      text: '  My order never came.  ',
    });
    const slug = landed(posted);
    // The pass names the conversation, whose start it was and when, signed.
    expect(v.cookies.get('convo_pass')).toMatch(/^\d+-\d+-\d{13}~[\w-]{43}$/);

    // The API has it as a start through the primary page: private, with the page's team. The
    // address is nobody's word yet: the message is anonymous, and the visitor no member.
    const c = await api(slug);
    expect(c).toMatchObject({
      // Who and what, for the team's inbox (the API's create keeps the account's naming).
      title: 'Vera Visitor: My order never came.',
      via_primary_intake_page: true,
      intake_page_id: null,
      anyone_can_post: false,
      allow_search_engines: false,
      public: false,
      workflow: { name: 'Welcome' },
    });
    expect(c.users.map((u: { email: string }) => u.email)).toEqual(['sam@front.example']);
    expect(c.messages).toHaveLength(1);
    expect(c.messages[0]).toMatchObject({ text: 'My order never came.', author: { anonymous: true } });
    // Its words are the team's inbox search's from the start.
    const [said] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`select said::text as words from conversation where id = ?`, [c.id]);
    expect(said.words).toBe("'came' 'my' 'never' 'order'");

    // This device opens it, the message under the name given and marked as not verified; another
    // device does not see it at all.
    const page = await v.get(`/c/${slug}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('My order never came.');
    expect(page.html).toContain('Vera Visitor (not verified)');
    expect(page.html).not.toContain('Posting as Vera Visitor.');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect((await new Visitor(h, HOST).get(`/c/${slug}`)).status).toBe(404);
    // Back at the home page, the device finds it above the form; another device finds nothing.
    const home = await v.get('/');
    expect(home.html).toContain('My conversations');
    expect(home.html).toContain(`<a href="/c/${slug}">Vera Visitor: My order never came.</a>`);
    expect((await new Visitor(h, HOST).get('/')).html).not.toContain('My conversations');
    // A second start on the same device: both are listed, read at once, the newest first.
    const again = await start(v, '/', {
      name: 'Vera Visitor',
      email: 'vera.again@visitor.example',
      text: 'Still waiting.',
    });
    expect(again.status).toBe(303);
    const before = h.statements.length;
    const both = await v.get('/');
    const listed = elements(both.html)
      .filter((e) => e.tagName === 'a' && (attr(e, 'href') ?? '').startsWith('/c/'))
      .map((e) => textOf(e));
    expect(listed).toEqual(['Vera Visitor: Still waiting.', 'Vera Visitor: My order never came.']);
    // One read checks every start the pass holds, one lists them.
    const reads = h.statements.slice(before);
    expect(reads.filter((q) => q.includes('passes_valid_after'))).toHaveLength(1);

    // The mail quotes nothing the visitor wrote or chose; its link confirms the address on any
    // device: the message is Vera's, she is a member, and signed in. (Its domain arrives in lower case.)
    const mail = await mailTo(mailbox, 'Vera@visitor.example', SIGN_IN);
    expect(mail.text).toContain(`${HOST}/c/${slug}`);
    expect(mail.text).not.toContain('My order never came');
    expect(mail.text).not.toContain('Vera Visitor');
    const elsewhere = new Visitor(h, HOST);
    expect((await elsewhere.get(new URL(signInLink(mail)).pathname)).html).toContain('Confirm your conversation');
    const confirmed = await elsewhere.confirm(signInLink(mail));
    expect([confirmed.status, location(confirmed)]).toEqual([303, `/c/${slug}#message-${c.messages[0].id}`]);
    expect((await elsewhere.get(`/c/${slug}`)).status).toBe(200);
    const after = await api(slug);
    expect(after.users.map((u: { email: string }) => u.email)).toEqual(['sam@front.example', 'Vera@Visitor.example']);
    expect(after.messages[0].author).toMatchObject({ anonymous: false, name: 'Vera Visitor' });
    expect((await elsewhere.get(`/c/${slug}`)).html).toContain('Posting as Vera Visitor.');
    const replied = await elsewhere.reply(slug, { text: 'Order 1234' });
    expect(replied.status).toBe(303);
    expect((await api(slug)).messages.at(-1).author.name).toBe('Vera Visitor');
  });

  it('never posts as an existing person on an address typed into the form', async () => {
    // A stranger types Pat's address (a participant of the account) and Pat's name.
    const stranger = new Visitor(h, HOST);
    const posted = await start(stranger, '/', {
      name: 'Pat Customer',
      email: 'pat@customer.example',
      text: 'Please send my refund to this new account.',
    });
    // Answered as any start is: the same landing as for an address nobody has.
    const slug = landed(posted);
    const c = await api(slug);
    expect(c.messages[0].author).toEqual({ anonymous: true });
    expect(c.users.map((u: { email: string }) => u.email)).not.toContain('pat@customer.example');
    // The team sees it is not Pat's word; the stranger's device reads it but acts as nobody.
    const sam = await signedIn('sam@front.example');
    expect((await sam.get(`/c/${slug}`)).html).toContain('Pat Customer (not verified)');
    expect((await sam.reply(slug, { text: 'Hello Pat, which account?' })).status).toBe(303);
    const seen = await stranger.get(`/c/${slug}`);
    expect(seen.status).toBe(200);
    expect(seen.html).not.toContain('Posting as Pat Customer');
    // A reply from that device under Pat's name waits for Pat's own confirmation, as any named reply.
    const reply = await stranger.reply(slug, {
      text: 'The account is 999',
      name: 'Pat Customer',
      email: 'pat@customer.example',
    });
    expect(reply.html).toContain('Check your e-mail');
    expect((await api(slug)).messages.map((m: { text: string }) => m.text)).not.toContain('The account is 999');
    // Only Pat, confirming the mailed link, puts Pat's name on it.
    const mail = await mailTo(mailbox, 'pat@customer.example', SIGN_IN);
    expect(mail.text).not.toContain('refund');
    const pat = new Visitor(h, HOST);
    expect((await pat.confirm(signInLink(mail))).status).toBe(303);
    expect((await api(slug)).messages[0].author).toMatchObject({ anonymous: false, email: 'pat@customer.example' });
  });

  it('fires conversation_created, then message_created, and runs the page workflow', async () => {
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into webhook_endpoint (account_id, url, events, secret)
         select id, 'https://hooks.example.com/in', '{conversation_created,message_created}', 'whsec_x' from account where key = 'front'`,
      );
    const posted = await start(new Visitor(h, HOST), '/', {
      name: 'Wes',
      email: 'wes@visitor.example',
      text: 'Hello',
    });
    const c = await api(slugOf(posted));
    const events = await h.db.orm.em
      .fork()
      .getConnection()
      .execute('select type, message_id from webhook_event where conversation_id = ? order by id', [c.id]);
    expect(events).toEqual([
      { type: 'conversation_created', message_id: null },
      { type: 'message_created', message_id: c.messages[0].id },
    ]);
    while (await advanceWorkflows(h.services.workflowJobs)) {}
    expect((await api(c.slug)).tags.map((t: { name: string }) => t.name)).toEqual(['new']);
  });

  it('takes a recording with the message (multipart, measured by the server)', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/');
    const posted = await v.postMultipart(
      '/',
      { csrf: v.hidden('csrf'), submit: v.hidden('submit'), name: 'Rita', email: 'rita@visitor.example', text: '' },
      {
        name: 'voice.webm',
        type: 'audio/webm',
        bytes: new Uint8Array(readFileSync(join(FIXTURES, 'audio-3s.webm'))),
      },
    );
    expect(posted.status).toBe(303);
    const m = (await api(slugOf(posted))).messages[0];
    expect(m).toMatchObject({ message_type: 'audio', recorded_duration_seconds: 3, text: '' });
    const media = await v.get(new URL(m.download_media_url).pathname);
    expect(media.status).toBe(200);
  });

  it('posts the same form once however often it is sent', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/');
    const fields = {
      csrf: v.hidden('csrf'),
      submit: v.hidden('submit'),
      name: 'Dot',
      email: 'dot@v.example',
      text: 'Once',
    };
    const before = await count('conversation');
    const [a, b] = await Promise.all([v.post('/', fields), v.post('/', fields)]);
    const c = await v.post('/', fields);
    expect(new Set([location(a), location(b), location(c)]).size).toBe(1);
    expect(await count('conversation')).toBe(before + 1);
  });
});

describe('refusals change nothing', () => {
  it.each([
    [{ name: '', email: 'x@v.example', text: 'Hi' }, /name/i],
    [{ name: 'X', email: 'not an address', text: 'Hi' }, /e-mail/i],
    [{ name: 'X', email: 'x@v.example', text: '   ' }, /^Write a message, or send a recording\.$/],
    [{ name: 'X', email: 'sam@front.example', text: 'Hi' }, /belongs to the team of Front Desk: sign in/],
  ])('%j', async (fields, problem) => {
    const before = [await count('conversation'), await count('account_user'), await comeBacks()];
    const v = new Visitor(h, HOST);
    const refused = await start(v, '/', fields);
    expect(refused.status).toBe(422);
    const alert = present(elements(refused.html).find((e) => attr(e, 'role') === 'alert'));
    expect(textOf(alert)).toMatch(problem);
    // What the visitor typed is still there.
    expect(refused.html).toContain(`value="${fields.email}"`);
    expect([await count('conversation'), await count('account_user'), await comeBacks()]).toEqual(before);
  });

  it('refuses a form without its token, or from another site, with a page that says why', async () => {
    const before = await count('conversation');
    const v = new Visitor(h, HOST);
    await v.get('/');
    const csrf = v.hidden('csrf');
    const fields = { submit: v.hidden('submit'), name: 'M', email: 'm@v.example', text: 'Hi' };
    expect((await v.post('/', fields)).status).toBe(403);
    expect((await v.post('/', { ...fields, csrf: 'forged' })).status).toBe(403);
    const foreign = await v.post('/', { ...fields, csrf }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.html).toContain('another site');
    expect(await count('conversation')).toBe(before);
  });

  it('answers 404 for another account’s page, a disabled one and a key that is no page', async () => {
    const v = new Visitor(h, HOST);
    for (const path of ['/p/theirs', '/p/old', '/p/nope', '/p/bad%20key', '/embeds/p/old', '/embeds/p/theirs']) {
      expect((await v.get(path)).status, path).toBe(404);
    }
    await v.get('/p/feedback');
    const fields = { csrf: v.hidden('csrf'), submit: v.hidden('submit'), text: 'Hi' };
    expect((await v.post('/p/old', fields)).status).toBe(404);
    expect((await v.post('/p/theirs', fields)).status).toBe(404);
    // Elsewhere's own page is on its own host only.
    expect((await new Visitor(h, OTHER_HOST).get('/p/theirs')).status).toBe(200);
  });

  it('limits starts per client address and per e-mail address (429 with Retry-After)', async () => {
    const app = secondApp(h, {}, { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 2 } } });
    const v = new Visitor({ ...h, app }, HOST);
    await awayFromWindowEnd(15 * 60);
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await start(v, '/', { name: 'L', email: 'l@v.example', text: `${i}` })).status);
    expect(statuses).toEqual([303, 303, 429]);
    expect(v.last?.headers.get('retry-after')).toMatch(/^\d+$/);
    const byIp = secondApp(h, {}, { site: { limits: { perIpPerMinute: 1, perEmailPer15Minutes: 1000 } } });
    // (On the other account's site: its count of this address starts here.)
    const w = new Visitor({ ...h, app: byIp }, OTHER_HOST);
    await awayFromWindowEnd();
    expect((await start(w, '/', { name: 'I', email: 'i1@v.example', text: 'a' })).status).toBe(303);
    expect((await start(w, '/', { name: 'I', email: 'i2@v.example', text: 'b' })).status).toBe(429);
  });
});

describe('a page read earlier by this process', () => {
  it('is started from as it is now, and not at all once disabled', async () => {
    const made = await apiCall(h, 'POST', '/intake_pages', auth(TOKEN), {
      name: 'Later',
      key: 'later',
      team: ['sam@front.example'],
    });
    expect(made.status).toBe(201);
    // Another replica: it read the page when the visitor opened it, and remembers it.
    const replica = secondApp(h, {}, { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } });
    const v = new Visitor({ ...h, app: replica }, HOST);
    const fields = (text: string) => ({
      csrf: v.hidden('csrf'),
      submit: v.hidden('submit'),
      name: 'Lea',
      email: 'lea@v.example',
      text,
    });
    expect((await v.get('/p/later')).status).toBe(200);
    const team = await apiCall(h, 'PATCH', `/intake_pages/${made.body.id}`, auth(TOKEN), {
      title: 'Later, changed',
      team: ['olivia@front.example'],
    });
    expect(team.status).toBe(200);
    const posted = await v.post('/p/later', fields('After the change'));
    expect(posted.status).toBe(303);
    const c = await api(slugOf(posted));
    expect(c.users.map((u: { email: string }) => u.email)).toEqual(['olivia@front.example']);

    await v.get('/p/later');
    expect((await apiCall(h, 'PATCH', `/intake_pages/${made.body.id}`, auth(TOKEN), { disabled: true })).status).toBe(
      200,
    );
    const before = [await count('conversation'), await count('message')];
    const refused = await v.post('/p/later', { ...fields('After it was disabled'), email: 'new@v.example' });
    expect(refused.status).toBe(404);
    expect([await count('conversation'), await count('message')]).toEqual(before);
    // Nobody was made for the address, and nothing was mailed to it: no link, none asked for, no
    // mail queued (the queue's count would not do: a mail the worker sends meanwhile leaves it).
    for (const [table, column] of [
      ['account_user', 'email'],
      ['sign_in_link', 'email'],
      ['notify_event', 'come_back_email'],
      ['outgoing_mail', 'recipient'],
    ]) {
      expect(
        await h.db.orm.em.fork().getConnection().execute(`select id from ${table} where ${column} = 'new@v.example'`),
      ).toEqual([]);
    }
  });
});

describe('a secondary page and its embed', () => {
  it('starts anonymously where the page allows it; the device opens and answers it', async () => {
    const v = new Visitor(h, HOST);
    const posted = await start(v, '/p/feedback', { text: 'Anonymous feedback' });
    expect(posted.status).toBe(303);
    const slug = slugOf(posted);
    const c = await api(slug);
    expect(c).toMatchObject({ via_primary_intake_page: false, allow_anonymous_messages: true, public: false });
    expect(c.intake_page_id).toBeGreaterThan(0);
    expect(c.messages[0].author).toEqual({ anonymous: true });
    expect(c.users.map((u: { email: string }) => u.email)).toEqual(['sam@front.example']);
    expect((await v.get(`/c/${slug}`)).status).toBe(200);
    expect((await v.reply(slug, { text: 'And more' })).status).toBe(303);
    expect((await api(slug)).messages).toHaveLength(2);
    expect((await new Visitor(h, HOST).get(`/c/${slug}`)).status).toBe(404);
  });

  it('works in another site’s frame without any cookie, landing on the conversation’s embed', async () => {
    const v = new Visitor(h, HOST);
    const page = await v.get('/embeds/p/feedback');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain('frame-ancestors *');
    expect(page.headers.get('set-cookie')).toBeNull();
    const token = v.hidden('csrf');
    v.cookies.clear();
    const posted = await v.post('/embeds/p/feedback', {
      csrf: token,
      submit: v.hidden('submit'),
      name: 'Fran',
      email: 'fran@v.example',
      text: 'From the frame',
    });
    expect(posted.status).toBe(303);
    const landing = location(posted);
    // No address carries a pass: the frame lands with a one-time code.
    expect(landing).toMatch(/^\/embeds\/conversations\/front\/[\w-]+\?code=[\w-]{43}#message-\d+$/);
    const slug = slugOf(posted);
    v.cookies.clear();
    const embed = await v.get(landing.replace(/#.*/, ''));
    expect(embed.status).toBe(200);
    expect(embed.html).toContain('From the frame');
    // The code became the frame's own pass: partitioned by the site around it, sent in frames.
    expect(embed.headers.get('set-cookie')).toMatch(
      /^convo_embed_pass=[\w.~-]+; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=None; Partitioned/,
    );
    expect((await v.get(`/embeds/conversations/front/${slug}`)).status).toBe(200);
    // Spent: the same address opens nothing for anyone else (a proxy's log, a copied link).
    expect((await new Visitor(h, HOST).get(landing.replace(/#.*/, ''))).status).toBe(404);
    // The frame's pass is the frame's: the account's own pages do not read it as theirs.
    expect(v.cookies.has('convo_pass')).toBe(false);

    // "Reply on …" carries the start to a tab of the site's own in a form's body, not an address.
    const reply = present(
      elements(embed.html).find((e) => e.tagName === 'form' && attr(e, 'action') === `/c/${slug}/pass`),
    );
    expect(attr(reply, 'target')).toBe('_blank');
    expect(elements(embed.html).some((e) => e.tagName === 'a' && /[?&](pass|code)=/.test(attr(e, 'href') ?? ''))).toBe(
      false,
    );
    const tab = new Visitor(h, HOST);
    const handoff = present(
      /name="csrf" value="([^"]+)"/.exec(embed.html.slice(embed.html.indexOf(`/c/${slug}/pass`)))?.[1],
    );
    expect((await tab.post(`/c/${slug}/pass`, { csrf: `${handoff.slice(0, -3)}AAA` })).status).toBe(403);
    const opened = await tab.post(`/c/${slug}/pass`, { csrf: handoff });
    expect([opened.status, location(opened)]).toEqual([303, `/c/${slug}#reply`]);
    expect((await tab.get(`/c/${slug}`)).status).toBe(200);
    // An old address with `?pass=` opens nothing.
    const pass = present(tab.cookies.get('convo_pass'));
    expect((await new Visitor(h, HOST).get(`/c/${slug}?pass=${pass}`)).status).toBe(404);
    expect((await new Visitor(h, HOST).get(`/embeds/conversations/front/${slug}?pass=${pass}`)).status).toBe(404);

    // The form token is the page's own: forged or another page's, it is refused.
    expect(
      (await v.post('/embeds/p/feedback', { csrf: `${token.split('.')[0]}.${'A'.repeat(43)}`, text: 'x' })).status,
    ).toBe(403);
    expect((await v.post('/embeds/p/contact', { csrf: token, text: 'x' })).status).toBe(403);
    // A pass opens only the conversations it started; rewritten to name another, it is no longer ours.
    const first = (await apiCall(h, 'GET', '/conversations/get_conversations', auth(TOKEN))).body.conversations.at(-1);
    const other = new Visitor(h, HOST);
    other.cookies.set('convo_pass', pass);
    expect((await other.get(`/c/${first.slug}`)).status).toBe(404);
    other.cookies.set('convo_pass', pass.replace(/^\d+/, String(first.id)));
    expect((await other.get(`/c/${first.slug}`)).status).toBe(404);
  });

  it('ends a pass after its 30 days, or when the team ends the starting devices’ access', async () => {
    const v = new Visitor(h, HOST);
    const posted = await start(v, '/p/feedback', { text: 'Anonymous, with a recording to come' });
    const slug = slugOf(posted);
    expect((await v.get(`/c/${slug}`)).status).toBe(200);
    const c = await api(slug);

    // A pass whose start is 30 days old, signed by the site itself, opens nothing.
    const key = await h.services.secrets.signingKey();
    const [{ id: accountId }] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute("select id from account where key = 'front'");
    const signed = (payload: string) =>
      `${payload}~${createHmac('sha256', key).update(`pass:${accountId}:${payload}`).digest('base64url')}`;
    const old = new Visitor(h, HOST);
    old.cookies.set('convo_pass', signed(`${c.id}-0-${Date.now() - 30 * 24 * 3600 * 1000 - 1000}`));
    expect((await old.get(`/c/${slug}`)).status).toBe(404);
    old.cookies.set('convo_pass', signed(`${c.id}-0-${Date.now() - 29 * 24 * 3600 * 1000}`));
    expect((await old.get(`/c/${slug}`)).status).toBe(200);

    // The team ends every starting device's access from the conversation's members.
    const sam = await signedIn('sam@front.example');
    await sam.get(`/c/${slug}`);
    const ended = await sam.post(`/c/${slug}/members`, { csrf: sam.hidden('csrf'), end_passes: '1' });
    expect([ended.status, location(ended)]).toEqual([303, `/c/${slug}#manage-members`]);
    for (const device of [v, old]) {
      expect((await device.get(`/c/${slug}`)).status).toBe(404);
      expect((await device.get(`/embeds/conversations/front/${slug}`)).status).toBe(404);
      expect((await device.get(`/c/${slug}/events`)).status).toBe(404);
    }
    // Nobody but the team may end it; the team still reads it.
    const stranger = new Visitor(h, HOST);
    await stranger.get('/p/feedback');
    expect((await stranger.post(`/c/${slug}/members`, { csrf: stranger.hidden('csrf'), end_passes: '1' })).status).toBe(
      404,
    );
    expect((await sam.get(`/c/${slug}`)).status).toBe(200);
    // A start after it opens as before.
    const again = await start(v, '/p/feedback', { text: 'A new one' });
    expect((await v.get(`/c/${slugOf(again)}`)).status).toBe(200);
  });

  it('opens the conversation of a form token sent again only on the device that started it', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/p/feedback');
    const fields = { csrf: v.hidden('csrf'), submit: v.hidden('submit'), text: 'Once' };
    const first = await v.post('/p/feedback', fields);
    expect(first.status).toBe(303);
    // The same device sends it again (a double click): the same conversation.
    const twice = await v.post('/p/feedback', fields);
    expect([twice.status, location(twice)]).toEqual([303, location(first)]);
    // Another device with the same form token (copied from a page, a log): refused, nothing opened.
    const other = new Visitor(h, HOST);
    await other.get('/p/feedback');
    const replay = await other.post('/p/feedback', { ...fields, csrf: other.hidden('csrf') });
    expect(replay.status).toBe(422);
    expect(replay.html).toContain('This form was already used');
    expect(other.cookies.has('convo_pass')).toBe(false);
    expect((await other.get(`/c/${slugOf(first)}`)).status).toBe(404);
    expect((await api(slugOf(first))).messages).toHaveLength(1);
  });

  it('shows the team the page as visitors see it, without a form, and refuses their post', async () => {
    const sam = await signedIn('sam@front.example');
    const page = await sam.get('/p/feedback');
    expect(page.status).toBe(200);
    expect(page.html).toContain('this is the page as visitors see it');
    expect(elements(page.html).some((e) => e.tagName === 'textarea')).toBe(false);
    expect((await sam.post('/p/feedback', { csrf: sam.hidden('csrf'), text: 'x' })).status).toBe(403);
    // At / the team has its inbox, not the intake page.
    expect((await sam.get('/')).html).toContain('Inbox');
  });

  it('lets a signed-in participant start under their own name, with no mail', async () => {
    const pat = await signedIn('pat@customer.example');
    const links = await comeBacks();
    const posted = await start(pat, '/p/feedback', { text: 'Signed in', name: 'Someone Else', email: 'x@y.example' });
    expect(posted.status).toBe(303);
    expect((await api(slugOf(posted))).messages[0].author).toMatchObject({ name: 'Pat Customer' });
    expect(await comeBacks()).toBe(links);
  });
});

describe('the team manages intake pages and workflows on the site', () => {
  const pages = async () => (await apiCall(h, 'GET', '/intake_pages', auth(TOKEN))).body.intake_pages;
  const workflows = async () => (await apiCall(h, 'GET', '/workflows', auth(TOKEN))).body.workflows;

  it('are the 404 for anyone but the owners and admins, a team member included, and change nothing', async () => {
    const before = JSON.stringify(await pages());
    const workflowsBefore = JSON.stringify(await workflows());
    const sam = await signedIn('sam@front.example');
    // A team member's inbox offers no way there either.
    expect((await sam.get('/')).html).not.toContain('/manage/intake-pages');
    expect((await (await signedIn('olivia@front.example')).get('/')).html).toContain('/manage/intake-pages');
    for (const v of [new Visitor(h, HOST), await signedIn('pat@customer.example'), sam]) {
      await v.get('/p/feedback');
      const csrf = v.hidden('csrf');
      for (const path of ['/manage/intake-pages', '/manage/workflows']) {
        expect((await v.get(path)).status, path).toBe(404);
        expect((await v.post(path, { csrf, name: 'Sneaky' })).status, path).toBe(404);
      }
      expect((await v.post('/manage/intake-pages/1', { csrf, name: 'Sneaky', key: 'sneaky' })).status).toBe(404);
      // What a team member could do with them: publish a private recording as a page's welcome,
      // post as the owner, join every new conversation.
      const recording = { csrf, name: 'Leak', key: 'leak', welcome_recording: '1', team: 'sam@front.example' };
      expect((await v.post('/manage/intake-pages/1', recording)).status).toBe(404);
      const steps = JSON.stringify([
        {
          trigger: { type: 'conversation.created' },
          action: { type: 'post_message', as: 'olivia@front.example', text: 'Send me your card number' },
        },
      ]);
      expect((await v.post('/manage/workflows', { csrf, name: 'As the owner', steps })).status).toBe(404);
      expect((await v.post('/manage/workflows/1', { csrf, name: 'As the owner', steps })).status).toBe(404);
    }
    expect(JSON.stringify(await pages())).toBe(before);
    expect(JSON.stringify(await workflows())).toBe(workflowsBefore);
  });

  it('changes, disables and adds intake pages with the API’s rules', async () => {
    const owner = await signedIn('olivia@front.example');
    const list = await owner.get('/manage/intake-pages');
    expect(list.status).toBe(200);
    expect(list.headers.get('cache-control')).toBe('no-store');
    const feedback = (await pages()).find((p: { key: string }) => p.key === 'feedback');
    const form = {
      csrf: owner.hidden('csrf'),
      name: 'Feedback',
      key: 'feedback',
      title: 'Tell us how we did',
      welcome_text: 'Every word is read.',
      workflow: '',
      team: 'sam@front.example',
      allow_anonymous: 'on',
    };
    const saved = await owner.post(`/manage/intake-pages/${feedback.id}`, form);
    expect([saved.status, location(saved)]).toEqual([303, `/manage/intake-pages#page-${feedback.id}`]);
    expect((await pages()).find((p: { id: number }) => p.id === feedback.id)).toMatchObject({
      title: 'Tell us how we did',
      welcome_text: 'Every word is read.',
      allow_anonymous: true,
      disabled: false,
    });
    expect((await new Visitor(h, HOST).get('/p/feedback')).html).toContain('Tell us how we did');

    // Disabled, the page is gone for visitors; enabled again, it is back.
    await owner.post(`/manage/intake-pages/${feedback.id}`, { ...form, disabled: 'on' });
    expect((await new Visitor(h, HOST).get('/p/feedback')).status).toBe(404);
    await owner.post(`/manage/intake-pages/${feedback.id}`, form);
    expect((await new Visitor(h, HOST).get('/p/feedback')).status).toBe(200);

    // Refusals: the page again at that form, with the reason and what was sent; nothing saved.
    const before = JSON.stringify(await pages());
    const stranger = await owner.post(`/manage/intake-pages/${feedback.id}`, { ...form, team: 'pat@customer.example' });
    expect(stranger.status).toBe(422);
    expect(textOf(present(elements(stranger.html).find((e) => attr(e, 'role') === 'alert')))).toMatch(
      /not on the account's team: pat@customer.example/,
    );
    expect(stranger.html).toContain('pat@customer.example</textarea>');
    expect((await owner.post(`/manage/intake-pages/${feedback.id}`, { ...form, key: 'Bad Key' })).status).toBe(422);
    expect((await owner.post('/manage/intake-pages', { csrf: form.csrf, name: '' })).status).toBe(422);
    expect((await owner.post('/manage/intake-pages/999999', form)).status).toBe(404);
    expect((await owner.post(`/manage/intake-pages/${feedback.id}`, { ...form, csrf: 'forged' })).status).toBe(403);
    expect(JSON.stringify(await pages())).toBe(before);

    const made = await owner.post('/manage/intake-pages', { csrf: form.csrf, name: 'Press enquiries', key: '' });
    expect(made.status).toBe(303);
    expect((await pages()).map((p: { key: string }) => p.key)).toContain('press-enquiries');
    expect((await new Visitor(h, HOST).get('/p/press-enquiries')).status).toBe(200);
  });

  it('adds and changes workflows, refusing bad JSON and unknown steps with the reason', async () => {
    const owner = await signedIn('olivia@front.example');
    await owner.get('/manage/workflows');
    const csrf = owner.hidden('csrf');
    const before = (await workflows()).length;
    const json = { csrf, editor: 'json' };
    const bad = await owner.post('/manage/workflows', { ...json, name: 'Broken', steps: '[{"trigger": ' });
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('steps: not valid JSON');
    const unknown = await owner.post('/manage/workflows', {
      ...json,
      name: 'Unknown',
      steps: '[{"trigger":{"type":"moon.full"},"action":{"type":"add_tags","tags":["x"]}}]',
    });
    expect(unknown.status).toBe(422);
    expect(unknown.html).toMatch(/steps:.*trigger/);
    expect((await workflows()).length).toBe(before);

    const steps = '[{"trigger":{"type":"conversation.created"},"action":{"type":"add_tags","tags":["site"]}}]';
    const made = await owner.post('/manage/workflows', { ...json, name: 'From the site', steps });
    expect(made.status).toBe(303);
    const saved = (await workflows()).find((w: { name: string }) => w.name === 'From the site');
    expect(saved.steps).toEqual(JSON.parse(steps));
    const disabled = await owner.post(`/manage/workflows/${saved.id}`, {
      ...json,
      name: 'From the site',
      steps,
      disabled: 'on',
    });
    expect([disabled.status, location(disabled)]).toEqual([303, `/manage/workflows#workflow-${saved.id}`]);
    expect((await workflows()).find((w: { id: number }) => w.id === saved.id).disabled).toBe(true);
  });
});

describe('the workflow step editor', () => {
  const workflows = async () => (await apiCall(h, 'GET', '/workflows', auth(TOKEN))).body.workflows;

  it('saves steps typed as fields, shows them as fields again, and says why it refuses, keeping them', async () => {
    const owner = await signedIn('olivia@front.example');
    await owner.get('/manage/workflows');
    const csrf = owner.hidden('csrf');
    const made = await owner.post('/manage/workflows', {
      csrf,
      editor: 'fields',
      name: 'Editor made',
      'step.0.trigger': 'message.created',
      'step.0.by': 'participant',
      'step.0.wait': '2',
      'step.0.wait_unit': 'hours',
      'step.0.action': 'post_message',
      'step.0.as': 'olivia@front.example',
      'step.0.text': 'Thanks!\r\nWe read every word.',
      'step.0.recording': '',
      'step.0.tags': 'ignored',
    });
    expect(made.status).toBe(303);
    const saved = (await workflows()).find((w: { name: string }) => w.name === 'Editor made');
    expect(saved.steps).toEqual([
      {
        trigger: { type: 'message.created', by: 'participant', delay_seconds: 7200 },
        action: { type: 'post_message', as: 'olivia@front.example', text: 'Thanks!\nWe read every word.' },
      },
    ]);

    // The page shows the saved step as fields, then a blank one to add.
    const page = await owner.get('/manage/workflows');
    const prefix = `workflow-${saved.id}-step`;
    const byId = (id: string) => present(elements(page.html).find((e) => attr(e, 'id') === id));
    /** The value of the option chosen in the select with this id. */
    const selected = (id: string) =>
      attr(
        present(
          elements(page.html).find(
            (e) =>
              e.tagName === 'option' &&
              e.attrs.some((a) => a.name === 'selected') &&
              e.parentNode !== null &&
              'attrs' in e.parentNode &&
              e.parentNode.attrs.some((a) => a.name === 'id' && a.value === id),
          ),
        ),
        'value',
      );
    expect(selected(`${prefix}-0-trigger`)).toBe('message.created');
    expect(attr(byId(`${prefix}-0-wait`), 'value')).toBe('2');
    expect(selected(`${prefix}-0-wait-unit`)).toBe('hours');
    expect(selected(`${prefix}-1-trigger`)).toBe('');

    // A second step added, the first removed: the one left is the new one.
    await owner.get('/manage/workflows');
    const changed = await owner.post(`/manage/workflows/${saved.id}`, {
      csrf: owner.hidden('csrf'),
      editor: 'fields',
      name: 'Editor made',
      'step.0.trigger': 'message.created',
      'step.0.by': 'participant',
      'step.0.action': 'add_tags',
      'step.0.remove': 'on',
      'step.1.trigger': 'no_reply',
      'step.1.from': 'team',
      'step.1.wait': '1',
      'step.1.wait_unit': 'days',
      'step.1.action': 'notify',
      'step.1.emails': 'olivia@front.example, sam@front.example',
    });
    expect(changed.status).toBe(303);
    expect((await workflows()).find((w: { id: number }) => w.id === saved.id).steps).toEqual([
      {
        trigger: { type: 'no_reply', from: 'team', within_seconds: 86_400 },
        action: { type: 'notify', emails: ['olivia@front.example', 'sam@front.example'] },
      },
    ]);

    const before = JSON.stringify(await workflows());
    await owner.get('/manage/workflows');
    const refused = await owner.post(`/manage/workflows/${saved.id}`, {
      csrf: owner.hidden('csrf'),
      editor: 'fields',
      name: 'Editor made',
      'step.0.trigger': 'repeat',
      'step.0.every': 'week',
      'step.0.times': 'lots',
      'step.0.action': 'add_tags',
      'step.0.tags': 'weekly',
    });
    expect(refused.status).toBe(422);
    expect(refused.html).toMatch(/steps.*times/);
    // What was typed is there again, to correct.
    expect(attr(present(elements(refused.html).find((e) => attr(e, 'id') === `${prefix}-0-tags`)), 'value')).toBe(
      'weekly',
    );
    expect(JSON.stringify(await workflows())).toBe(before);
  });
});

describe('the titles of started conversations', () => {
  it('follow the page’s pattern when the team sets one, and “{name}: {words}” when it clears it', async () => {
    const feedback = (await apiCall(h, 'GET', '/intake_pages', auth(TOKEN))).body.intake_pages.find(
      (p: { key: string }) => p.key === 'feedback',
    );
    const change = (conversation_title: string) =>
      apiCall(h, 'PATCH', `/intake_pages/${feedback.id}`, auth(TOKEN), { conversation_title });
    const set = await change('Feedback ({page}) from {name}: {words}');
    expect(set.status).toBe(200);
    expect(set.body.conversation_title).toBe('Feedback ({page}) from {name}: {words}');
    const fields = { name: 'Fay', email: 'fay@v.example', text: 'Lovely {date} service' };
    const slug = slugOf(await start(new Visitor(h, HOST), '/p/feedback', fields));
    expect((await api(slug)).title).toBe(`Feedback (${feedback.name}) from Fay: Lovely {date} service`);

    expect((await change('')).body.conversation_title).toBe('');
    const plain = slugOf(await start(new Visitor(h, HOST), '/p/feedback', { ...fields, text: 'Plain again' }));
    expect((await api(plain)).title).toBe('Fay: Plain again');
    const long = await change('x'.repeat(201));
    expect([long.status, long.body.code]).toEqual([422, 'invalid_input']);
  });
});

describe('a welcome recording above the form', () => {
  it('shows a kept recording of the account chosen by the team, and refuses any other', async () => {
    // A recording of the account's: a visitor's start with one.
    const v = new Visitor(h, HOST);
    await v.get('/p/feedback');
    const started = await v.postMultipart(
      '/p/feedback',
      { csrf: v.hidden('csrf'), submit: v.hidden('submit'), name: 'Wanda', email: 'wanda@v.example', text: '' },
      { name: 'hello.webm', type: 'audio/webm', bytes: new Uint8Array(readFileSync(join(FIXTURES, 'audio-3s.webm'))) },
    );
    const recorded = (await api(slugOf(started))).messages[0].id;
    const textOnly = (
      await api(slugOf(await start(new Visitor(h, HOST), '/', { name: 'T', email: 't@v.example', text: 'Only text' })))
    ).messages[0].id;
    const contact = (await apiCall(h, 'GET', '/intake_pages', auth(TOKEN))).body.intake_pages.find(
      (p: { key: string }) => p.key === 'contact',
    );
    const change = (body: unknown) => apiCall(h, 'PATCH', `/intake_pages/${contact.id}`, auth(TOKEN), body);

    for (const id of [textOnly, 999_999]) {
      const r = await change({ welcome_recording_message_id: id });
      expect([r.status, r.body.code, r.body.error]).toEqual([
        422,
        'invalid_input',
        `welcome_recording_message_id: message ${id} has no recording kept here`,
      ]);
    }
    expect((await change({ welcome_recording_message_id: recorded })).body.welcome_recording_message_id).toBe(recorded);

    const page = await new Visitor(h, HOST).get('/');
    const player = present(elements(page.html).find((e) => e.tagName === 'audio'));
    expect(attr(player, 'src')).toBe('/media/front/welcome/contact');
    expect(attr(player, 'aria-label')).toBe('Welcome audio, 0:03');
    const media = await new Visitor(h, HOST).get('/media/front/welcome/contact');
    expect([media.status, media.headers.get('content-type')]).toEqual([200, 'audio/webm']);
    expect(media.headers.get('content-security-policy')).toContain('sandbox');
    // As public as the page: another site's player may play it.
    expect(media.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    for (const path of ['/media/front/welcome/feedback', '/media/front/welcome/nope', '/media/other/welcome/contact']) {
      expect((await new Visitor(h, HOST).get(path)).status, path).toBe(404);
    }

    expect((await change({ welcome_recording_message_id: null })).body.welcome_recording_message_id).toBeNull();
    expect(elements((await new Visitor(h, HOST).get('/')).html).some((e) => e.tagName === 'audio')).toBe(false);
    expect((await new Visitor(h, HOST).get('/media/front/welcome/contact')).status).toBe(404);
  });
  it('is picked on the intake pages’ form from the team’s recordings, recorded in a conversation of the team’s', async () => {
    const owner = await signedIn('olivia@front.example');
    // A conversation started to record it in, its title suggested by the address.
    const form = await owner.get('/new?title=Welcome%20recording');
    expect(attr(present(elements(form.html).find((e) => attr(e, 'id') === 'new-title')), 'value')).toBe(
      'Welcome recording',
    );
    const started = await owner.post('/new', {
      csrf: owner.hidden('csrf'),
      submit: owner.hidden('submit'),
      title: 'Welcome recording',
      visibility: 'private',
    });
    const slug = (started.headers.get('location') ?? '').replace('/c/', '');
    const recorded = await owner.replyWithRecording(
      slug,
      { text: '' },
      { name: 'hi.webm', type: 'audio/webm', bytes: new Uint8Array(readFileSync(join(FIXTURES, 'audio-3s.webm'))) },
    );
    expect(recorded.status).toBe(303);
    const id = (await api(slug)).messages[0].id as number;

    const page = await owner.get('/manage/intake-pages');
    const options = elements(page.html)
      .filter((e) => e.tagName === 'option' && attr(e, 'value') !== '')
      .map((e) => `${attr(e, 'value')} ${textOf(e)}`);
    expect(options).toContain(
      `${id} Audio 0:03 by Olivia Owner in “Welcome recording”, ${new Date().toISOString().slice(0, 10)}`,
    );
    // A visitor's recording is theirs, not the team's to welcome with: not offered.
    expect(options.filter((o) => o.includes('by Wanda'))).toEqual([]);

    const contact = (await apiCall(h, 'GET', '/intake_pages', auth(TOKEN))).body.intake_pages.find(
      (p: { key: string }) => p.key === 'contact',
    );
    const saved = await owner.post(`/manage/intake-pages/${contact.id}`, {
      csrf: owner.hidden('csrf'),
      name: contact.name,
      key: contact.key,
      title: contact.title,
      welcome_text: contact.welcome_text,
      welcome_recording: String(id),
      workflow: contact.workflow_id === null ? '' : String(contact.workflow_id),
      team: contact.team.join(', '),
      ...(contact.primary ? { primary: 'on' } : {}),
      ...(contact.allow_anonymous ? { allow_anonymous: 'on' } : {}),
    });
    expect(saved.status).toBe(303);
    const welcome = present(elements((await new Visitor(h, HOST).get('/')).html).find((e) => e.tagName === 'audio'));
    expect(attr(welcome, 'aria-label')).toBe('Welcome audio, 0:03');
    const again = await owner.get('/manage/intake-pages');
    const chosen = elements(again.html).find(
      (e) => e.tagName === 'option' && attr(e, 'value') === String(id) && e.attrs.some((a) => a.name === 'selected'),
    );
    expect(chosen).toBeDefined();
  });

  it('is recorded right on the team’s page for it, by an owner or admin only', async () => {
    const video = {
      name: 'welcome.webm',
      type: 'video/webm',
      bytes: new Uint8Array(readFileSync(join(FIXTURES, 'video-3s.webm'))),
    };
    const contact = (await apiCall(h, 'GET', '/intake_pages', auth(TOKEN))).body.intake_pages.find(
      (p: { key: string }) => p.key === 'contact',
    );
    const path = `/manage/intake-pages/${contact.id}/welcome`;
    const state = async () =>
      JSON.stringify([
        (await apiCall(h, 'GET', '/intake_pages', auth(TOKEN))).body.intake_pages,
        await count('message'),
        await count('conversation'),
      ]);
    const before = await state();
    // Nobody else reaches it: a visitor, a participant, a team member, another account's owner.
    for (const v of [
      new Visitor(h, HOST),
      await signedIn('pat@customer.example'),
      await signedIn('sam@front.example'),
    ]) {
      await v.get('/');
      const csrf = v.hidden('csrf');
      expect((await v.get(path)).status).toBe(404);
      expect((await v.postMultipart(path, { csrf, submit: crypto.randomUUID() }, video)).status).toBe(404);
    }
    // Another account's owner, on their own site, finds no such page of theirs.
    const eve = await signedIn('eve@elsewhere.example', OTHER_HOST);
    expect((await eve.get('/manage/intake-pages')).status).toBe(200);
    expect((await eve.get(path)).status).toBe(404);
    expect(
      (await eve.postMultipart(path, { csrf: eve.hidden('csrf'), submit: crypto.randomUUID() }, video)).status,
    ).toBe(404);
    const owner = await signedIn('olivia@front.example');
    expect((await owner.get('/manage/intake-pages')).html).toContain(`href="${path}"`);
    for (const missing of ['/manage/intake-pages/999999/welcome', '/manage/intake-pages/x/welcome']) {
      expect((await owner.get(missing)).status).toBe(404);
    }
    // The recorder's form: a file input the recorder records into, and a way back.
    const form = await owner.get(path);
    expect(form.status).toBe(200);
    expect(form.html).toContain(`A welcome video for ${contact.name}`);
    expect(
      elements(form.html).some(
        (e) => e.tagName === 'input' && attr(e, 'type') === 'file' && attr(e, 'name') === 'media',
      ),
    ).toBe(true);
    // Refusals say why and change nothing: no recording, a file that is no recording.
    const csrf = owner.hidden('csrf');
    const none = await owner.postMultipart(path, { csrf, submit: owner.hidden('submit') });
    expect([none.status, textOf(present(elements(none.html).find((e) => attr(e, 'role') === 'alert')))]).toEqual([
      422,
      'Record a welcome video, or choose a file of one.',
    ]);
    const text = { name: 'notes.webm', type: 'video/webm', bytes: new TextEncoder().encode('not a recording at all') };
    expect((await owner.postMultipart(path, { csrf, submit: owner.hidden('submit') }, text)).status).toBe(422);
    expect((await owner.postMultipart(path, { csrf: 'forged', submit: crypto.randomUUID() }, video)).status).toBe(403);
    expect(await state()).toBe(before);

    // Recorded: the page's welcome at once, kept in an archived, closed conversation of the team's.
    await owner.get(path);
    const submit = owner.hidden('submit');
    const sent = await owner.postMultipart(path, { csrf, submit, media_kind: 'video' }, video);
    expect([sent.status, location(sent)]).toEqual([303, `/manage/intake-pages#page-${contact.id}`]);
    const page = (await apiCall(h, 'GET', '/intake_pages', auth(TOKEN))).body.intake_pages.find(
      (p: { key: string }) => p.key === 'contact',
    );
    expect(page.welcome_recording_message_id).toEqual(expect.any(Number));
    const welcome = present(elements((await new Visitor(h, HOST).get('/')).html).find((e) => e.tagName === 'video'));
    expect(attr(welcome, 'src')).toBe('/media/front/welcome/contact');
    const [kept] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute(
        `select c.title, c.state, c.archived_at is not null as archived, c.anyone_can_post, m.message_type
         from message m join conversation c on c.id = m.conversation_id where m.id = ?`,
        [page.welcome_recording_message_id],
      );
    expect(kept).toEqual({
      title: `Welcome video: ${contact.name}`,
      state: 'closed',
      archived: true,
      anyone_can_post: false,
      message_type: 'video',
    });
    // The same form sent again records nothing more.
    const messages = await count('message');
    const again = await owner.postMultipart(path, { csrf, submit, media_kind: 'video' }, video);
    expect(again.status).toBe(303);
    expect(await count('message')).toBe(messages);
  });
});
