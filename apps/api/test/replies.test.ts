import { loadSeed } from '@convo/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Harness, openHarness } from './support/harness.ts';
import { deliverMailTo, type Mailbox, signInLink } from './support/mailbox.ts';
import { attr, elements, present, Visitor } from './support/site.ts';

/*
 * People on the pages: replying under each combination of the two settings, as an anonymous
 * visitor, a newly registered one, a signed-in member and a signed-in non-member; sign-in by the
 * link the real SMTP server receives; the safety of every form.
 */

const HOST = 'https://talk.example.com';
const TOKEN = 'talk-site-token-0123456789';

let h: Harness;
let mailbox: Mailbox;
let stopMail: () => Promise<void>;

const CONVERSATIONS = [
  { slug: 'open-anon', anyone: true, anonymous: true },
  { slug: 'open-named', anyone: true, anonymous: false },
  { slug: 'private-anon', anyone: false, anonymous: true },
  { slug: 'private-named', anyone: false, anonymous: false },
] as const;

beforeAll(async () => {
  h = await openHarness({ app: { formLimits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } });
  const delivery = await deliverMailTo(h.services);
  mailbox = delivery.mailbox;
  stopMail = delivery.close;
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'talk',
        name: 'Talk',
        host: HOST,
        owner: 'olivia@talk.example',
        users: [
          { email: 'olivia@talk.example', name: 'Olivia Owner' },
          { email: 'nora@talk.example', name: 'Nora Nonmember' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: CONVERSATIONS.map((c) => ({
          title: `Conversation ${c.slug}`,
          slug: c.slug,
          anyone_can_post: c.anyone,
          allow_anonymous_messages: c.anonymous,
          members: ['olivia@talk.example'],
          messages: [{ author: 'olivia@talk.example', text: 'First!' }],
        })),
      },
    ],
  });
});
afterAll(async () => {
  await stopMail?.();
  await h?.close();
});

const api = async (slug: string) =>
  (
    await call(
      h,
      new Request(`http://api.test/api/v1/conversations/get_conversation?slug=${slug}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      }),
    )
  ).body;

const messageCount = async () =>
  Number((await h.db.orm.em.fork().getConnection().execute('select count(*)::int as n from message'))[0].n);

/** A visitor signed in through the mailed link. */
async function signedIn(email: string): Promise<Visitor> {
  const v = new Visitor(h, HOST);
  await v.get('/sign-in');
  const asked = await v.post('/sign-in', { csrf: v.hidden('csrf'), email, return: '/c/open-anon' });
  expect(asked.status).toBe(200);
  const opened = await v.get(new URL(signInLink(await mailbox.next(email))).pathname);
  expect(opened.status).toBe(303);
  return v;
}

const location = (p: { headers: Headers }) => p.headers.get('location') ?? '';
const messageId = (p: { headers: Headers }) => Number(/#message-(\d+)$/.exec(location(p))?.[1]);

describe('replying', () => {
  it('an anonymous visitor posts where anonymous messages are allowed; the API has it at once', async () => {
    const v = new Visitor(h, HOST);
    const posted = await v.reply('open-anon', { text: '  Hello from the page  ' });
    expect(posted.status).toBe(303);
    expect(location(posted)).toMatch(/^\/c\/open-anon#message-\d+$/);
    const c = await api('open-anon');
    const m = c.messages.at(-1);
    expect(m).toMatchObject({
      id: messageId(posted),
      message_type: 'text',
      recorded_duration_seconds: 0,
      download_media_url: null,
      author: { anonymous: true },
      text: 'Hello from the page',
      message_url: `${HOST}/c/open-anon#message-${messageId(posted)}`,
    });
    const listed = (
      await call(
        h,
        new Request('http://api.test/api/v1/conversations/get_conversations', {
          headers: { authorization: `Bearer ${TOKEN}` },
        }),
      )
    ).body.conversations.find((x: { slug: string }) => x.slug === 'open-anon');
    expect(listed.messages.at(-1).id).toBe(m.id);
    const page = await v.get('/c/open-anon');
    expect(elements(page.html).some((e) => attr(e, 'id') === `message-${m.id}`)).toBe(true);
  });

  it('refuses an empty or too long reply on the page, keeping the text, and writes nothing', async () => {
    const before = await messageCount();
    const v = new Visitor(h, HOST);
    const empty = await v.reply('open-anon', { text: '   ' });
    expect(empty.status).toBe(422);
    expect(empty.html).toContain('Write a reply before posting it.');
    const long = await v.reply('open-anon', { text: 'x'.repeat(10_001) });
    expect(long.status).toBe(422);
    expect(long.html).toContain('at most 10000 characters');
    expect((await v.reply('open-anon', { text: 'y'.repeat(10_000) })).status).toBe(303);
    expect(await messageCount()).toBe(before + 1);
  });

  it('asks for a name and e-mail where anonymous messages are not allowed, and registers the replier', async () => {
    const v = new Visitor(h, HOST);
    const refused = await v.reply('open-named', { text: 'Who am I?' });
    expect(refused.status).toBe(422);
    expect(refused.html).toContain('Give your name.');
    expect(refused.html).toContain('Who am I?');
    const posted = await v.reply('open-named', {
      text: 'Registered reply',
      name: 'Rita Replier',
      email: 'rita@else.example',
    });
    expect(posted.status).toBe(303);
    const m = (await api('open-named')).messages.at(-1);
    expect(m.author).toMatchObject({ anonymous: false, name: 'Rita Replier', email: 'rita@else.example' });
    expect(m.author.id).toEqual(expect.any(Number));
    // The page shows names, never e-mail addresses.
    const page = await v.get('/c/open-named');
    expect(page.html).toContain('Rita Replier');
    expect(page.html).not.toContain('rita@else.example');
    expect(page.html).not.toContain('olivia@talk.example');
  });

  it("does not take over an existing user's e-mail: the reply waits for the link mailed to it", async () => {
    const v = new Visitor(h, HOST);
    const before = (await api('open-named')).messages.length;
    const waiting = await v.reply('open-named', {
      text: 'Posted after sign-in',
      name: 'Impostor',
      email: 'OLIVIA@talk.example',
    });
    expect(waiting.status).toBe(200);
    expect(waiting.html).toContain('Check your e-mail');
    expect((await api('open-named')).messages).toHaveLength(before);
    const opened = await v.get(new URL(signInLink(await mailbox.next('olivia@talk.example'))).pathname);
    expect(opened.status).toBe(303);
    expect(location(opened)).toMatch(/^\/c\/open-named#message-\d+$/);
    const m = (await api('open-named')).messages.at(-1);
    expect(m).toMatchObject({ id: messageId(opened), text: 'Posted after sign-in' });
    expect(m.author).toMatchObject({ anonymous: false, name: 'Olivia Owner', email: 'olivia@talk.example' });
  });

  it('posts a resubmitted form once', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/c/open-anon');
    const form = { csrf: v.hidden('csrf'), submit: v.hidden('submit'), text: 'Only once' };
    const first = await v.post('/c/open-anon', form);
    const again = await v.post('/c/open-anon', form);
    expect(first.status).toBe(303);
    expect(location(again)).toBe(location(first));
    expect((await api('open-anon')).messages.filter((m: { text: string }) => m.text === 'Only once')).toHaveLength(1);
  });

  it.each(CONVERSATIONS)('$slug: who sees it and who may post', async (c) => {
    const anonymous = new Visitor(h, HOST);
    const member = await signedIn('olivia@talk.example');
    const outsider = await signedIn('nora@talk.example');
    const page = await anonymous.get(`/c/${c.slug}`);
    expect(page.status).toBe(c.anyone ? 200 : 404);
    expect((await outsider.get(`/c/${c.slug}`)).status).toBe(c.anyone ? 200 : 404);
    const memberPage = await member.get(`/c/${c.slug}`);
    expect(memberPage.status).toBe(200);
    expect(memberPage.html).toContain('Posting as Olivia Owner.');
    // A private page, once someone may see it, is kept by no cache; a public one is revalidated.
    expect(memberPage.headers.get('cache-control')).toBe(c.anyone ? 'private, no-cache' : 'no-store');
    if (!c.anyone) {
      // Not even the form: a private conversation is the 404 page to everyone else.
      expect(page.html).not.toContain('name="text"');
      const posted = await anonymous.post(`/c/${c.slug}`, {
        csrf: (await anonymous.get('/sign-in')) && anonymous.hidden('csrf'),
        text: 'sneaky',
        name: 'Sneaky',
        email: 'sneaky@else.example',
      });
      expect(posted.status).toBe(404);
    } else {
      const anon = await anonymous.reply(c.slug, { text: 'anonymous try' });
      expect(anon.status).toBe(c.anonymous ? 303 : 422);
      expect((await outsider.reply(c.slug, { text: 'from nora' })).status).toBe(303);
      expect((await api(c.slug)).messages.at(-1).author).toMatchObject({ name: 'Nora Nonmember' });
    }
    const byMember = await member.reply(c.slug, { text: `member on ${c.slug}` });
    expect(byMember.status).toBe(303);
    expect((await api(c.slug)).messages.at(-1)).toMatchObject({
      text: `member on ${c.slug}`,
      author: { anonymous: false, name: 'Olivia Owner' },
    });
  });
});

describe('signing in', () => {
  it('answers the same whether or not the address is a user, and mails only a user', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/sign-in');
    const csrf = v.hidden('csrf');
    const known = await v.post('/sign-in', { csrf, email: 'nora@talk.example', return: '/' });
    const unknown = await v.post('/sign-in', { csrf, email: 'nobody@talk.example', return: '/' });
    expect(known.status).toBe(200);
    expect(unknown.html).toBe(known.html);
    await mailbox.next('nora@talk.example');
    await new Promise((r) => setTimeout(r, 500));
    expect(mailbox.mails.filter((m) => m.to.includes('nobody@talk.example'))).toEqual([]);
  });

  it('gives a session cookie that is HttpOnly, SameSite=Lax and Secure on an https host; the link works once', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/sign-in');
    await v.post('/sign-in', { csrf: v.hidden('csrf'), email: 'nora@talk.example', return: '/c/open-anon' });
    const link = new URL(signInLink(await mailbox.next('nora@talk.example'))).pathname;
    const opened = await v.get(link);
    expect(opened.status).toBe(303);
    expect(location(opened)).toBe('/c/open-anon');
    const cookie = opened.headers.getSetCookie().find((c) => c.startsWith('convo_session='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/Max-Age=2592000/);
    expect(cookie).not.toMatch(/Domain=/i);
    expect((await new Visitor(h, HOST).get(link)).status).toBe(410);
  });

  it('refuses an expired link', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/sign-in');
    await v.post('/sign-in', { csrf: v.hidden('csrf'), email: 'nora@talk.example', return: '/' });
    const link = new URL(signInLink(await mailbox.next('nora@talk.example'))).pathname;
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute("update sign_in_link set expires_at = now() - interval '1 second'");
    expect((await v.get(link)).status).toBe(410);
  });

  it('signs out everywhere: the old cookie no longer signs anyone in', async () => {
    const v = await signedIn('nora@talk.example');
    const session = present(v.cookies.get('convo_session'));
    const page = await v.get('/c/open-anon');
    expect(page.html).toContain('Signed in as Nora Nonmember');
    const out = await v.post('/sign-out', { csrf: v.hidden('csrf'), return: '/c/open-anon' });
    expect(out.status).toBe(303);
    const stale = new Visitor(h, HOST);
    stale.cookies.set('convo_session', session);
    expect((await stale.get('/c/open-anon')).html).not.toContain('Signed in as');
  });

  it('slides a session that is more than a day old forward to 30 days', async () => {
    const v = await signedIn('nora@talk.example');
    const conn = h.db.orm.em.fork().getConnection();
    await conn.execute("update site_session set expires_at = now() + interval '10 days'");
    const page = await v.get('/c/open-anon');
    expect(page.headers.getSetCookie().some((c) => c.startsWith('convo_session='))).toBe(true);
    const [row] = await conn.execute(
      "select max(expires_at) > now() + interval '29 days' as renewed from site_session",
    );
    expect(row.renewed).toBe(true);
  });
});

describe('form safety', () => {
  it('refuses a post from another origin, without an origin, or with a wrong token, and writes nothing', async () => {
    const before = await messageCount();
    const v = new Visitor(h, HOST);
    await v.get('/c/open-anon');
    const form = { csrf: v.hidden('csrf'), submit: v.hidden('submit'), text: 'forged' };
    expect((await v.post('/c/open-anon', form, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await v.post('/c/open-anon', form, { origin: null })).status).toBe(403);
    expect((await v.post('/c/open-anon', { ...form, csrf: 'x'.repeat(43) })).status).toBe(403);
    const stranger = new Visitor(h, HOST);
    expect((await stranger.post('/c/open-anon', form)).status).toBe(403);
    expect(await messageCount()).toBe(before);
  });

  it('rate-limits posts per client address and sign-ins per e-mail, with Retry-After', async () => {
    const site = async (perIpPerMinute: number, perEmailPer15Minutes: number) => {
      const limited = await openHarness({ app: { formLimits: { perIpPerMinute, perEmailPer15Minutes } } });
      await loadSeed(limited.db.orm.em.fork(), {
        accounts: [
          {
            key: 'few',
            name: 'Few',
            host: 'https://few.example.com',
            users: [{ email: 'u@few.example', name: 'U' }],
            conversations: [{ slug: 'x', title: 'X', allow_anonymous_messages: true }],
          },
        ],
      });
      return limited;
    };
    const byIp = await site(3, 0);
    try {
      const v = new Visitor(byIp, 'https://few.example.com');
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await v.reply('x', { text: `n${i}` })).status);
      expect(statuses).toEqual([303, 303, 303, 429]);
      expect(v.last?.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(v.last?.html).toContain('Too many attempts');
    } finally {
      await byIp.close();
    }
    // Per e-mail address: a third sign-in request for one address in 15 minutes is refused, whoever sends it.
    const byEmail = await site(0, 2);
    try {
      const asked: number[] = [];
      for (let i = 0; i < 3; i++) {
        const someone = new Visitor(byEmail, 'https://few.example.com');
        await someone.get('/sign-in');
        asked.push(
          (
            await someone.post('/sign-in', {
              csrf: someone.hidden('csrf'),
              email: i === 1 ? 'U@few.example' : 'u@few.example',
            })
          ).status,
        );
      }
      expect(asked).toEqual([200, 200, 429]);
    } finally {
      await byEmail.close();
    }
  });

  it('refuses what is not a form: other content types, invalid UTF-8, repeated fields, huge bodies', async () => {
    const before = await messageCount();
    const v = new Visitor(h, HOST);
    await v.get('/c/open-anon');
    const csrf = v.hidden('csrf');
    const json = await v.post(
      '/c/open-anon',
      {},
      { body: JSON.stringify({ csrf, text: 'x' }), contentType: 'application/json' },
    );
    expect(json.status).toBe(415);
    const bad = await v.post('/c/open-anon', {}, { body: `csrf=${csrf}&text=%FF%FE` });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('not valid UTF-8');
    // The replacement character itself is text like any other.
    const replacement = await v.post('/c/open-anon', {}, { body: `csrf=${csrf}&text=%EF%BF%BD` });
    expect(replacement.status).toBe(303);
    const twice = await v.post('/c/open-anon', {}, { body: `csrf=${csrf}&csrf=${csrf}&text=x` });
    expect(twice.status).toBe(403);
    const doubled = await v.post('/c/open-anon', {}, { body: `csrf=${csrf}&text=a&text=b` });
    expect(doubled.status).toBe(422);
    const huge = await v.post('/c/open-anon', {}, { body: `csrf=${csrf}&text=${'x'.repeat(70_000)}` });
    expect(huge.status).toBe(413);
    expect(huge.headers.get('content-type')).toMatch(/^text\/html/);
    const many = await v.post('/c/open-anon', {}, { body: `csrf=${csrf}&${'a=1&'.repeat(150)}text=x` });
    expect(many.status).toBe(413);
    expect(await messageCount()).toBe(before + 1);
  });
});
