import { loadSeed } from '@convo/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Harness, openHarness } from './support/harness.ts';
import { deliverMailTo, type Mailbox, signInLink } from './support/mailbox.ts';
import { attr, elements, fingerprint, present, textOf, Visitor } from './support/site.ts';

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
  h = await openHarness({ app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } } });
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
  const opened = await v.confirm(signInLink(await mailbox.next(email)));
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

  it('takes a name without an address where anonymous messages are allowed: shown as not verified, anonymous in the API', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/c/open-anon');
    expect(elements(v.last?.html ?? '').some((e) => attr(e, 'id') === 'reply-name')).toBe(true);
    const posted = await v.reply('open-anon', { text: 'Named, no mail', name: '  Tom  ' });
    expect(posted.status).toBe(303);
    const id = messageId(posted);
    const m = (await api('open-anon')).messages.find((x: { id: number }) => x.id === id);
    expect(m).toMatchObject({ author: { anonymous: true }, text: 'Named, no mail' });
    const page = await v.get('/c/open-anon');
    expect(page.html).toContain('Tom (not verified)');
    // Nobody was made or mailed for it; a name that breaks its rule is refused, keeping the text.
    const tooLong = await v.reply('open-anon', { text: 'Kept', name: 'x'.repeat(300) });
    expect(tooLong.status).toBe(422);
    expect(tooLong.html).toContain('A name is at most 255 characters.');
    expect(tooLong.html).toContain('Kept');
  });

  it('refuses an empty or too long reply on the page, keeping the text, and writes nothing', async () => {
    const before = await messageCount();
    const v = new Visitor(h, HOST);
    const empty = await v.reply('open-anon', { text: '   ' });
    expect(empty.status).toBe(422);
    expect(empty.html).toContain('Write a reply before posting it.');
    // The form posts to #reply, so the refused page opens at the form, whose alert is announced.
    const all = elements(empty.html);
    const form = present(all.find((e) => e.tagName === 'form' && attr(e, 'class') === 'reply'));
    expect(attr(form, 'action')).toBe('/c/open-anon#reply');
    const section = present(all.find((e) => attr(e, 'id') === 'reply'));
    const alert = present(all.find((e) => attr(e, 'role') === 'alert'));
    expect(alert.parentNode).toBe(section);
    const long = await v.reply('open-anon', { text: 'x'.repeat(10_001) });
    expect(long.status).toBe(422);
    expect(long.html).toContain('at most 10000 characters');
    expect((await v.reply('open-anon', { text: 'y'.repeat(10_000) })).status).toBe(303);
    expect(await messageCount()).toBe(before + 1);
  });

  it('asks for a name and e-mail where anonymous messages are not allowed; the mailed link registers the replier', async () => {
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
    // Nothing is posted on the visitor's word: the address must confirm it.
    expect(posted.status).toBe(200);
    expect(posted.html).toContain('Check your e-mail');
    expect(posted.html).toContain('<a href="/c/open-named">Back to the conversation</a>');
    const mail = await mailbox.next('rita@else.example');
    // Nobody has confirmed the address: the mail quotes nothing the visitor wrote; the link's page shows it.
    expect(mail.text).not.toContain('Registered reply');
    expect((await new Visitor(h, HOST).get(new URL(signInLink(mail)).pathname)).html).toContain('Registered reply');
    const confirmed = await v.confirm(signInLink(mail));
    expect(confirmed.status).toBe(303);
    expect(location(confirmed)).toMatch(/^\/c\/open-named#message-\d+$/);
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
    // Mailed to the address as it was typed; its owner is found by it, ignoring case.
    const mail = await mailbox.next('OLIVIA@talk.example');
    // The mail quotes nothing a stranger wrote; the page its link opens shows the text it would post.
    expect(mail.text).not.toContain('Posted after sign-in');
    const opened = await v.confirm(signInLink(mail));
    expect(opened.status).toBe(303);
    expect(location(opened)).toMatch(/^\/c\/open-named#message-\d+$/);
    const m = (await api('open-named')).messages.at(-1);
    expect(m).toMatchObject({ id: messageId(opened), text: 'Posted after sign-in' });
    expect(m.author).toMatchObject({ anonymous: false, name: 'Olivia Owner', email: 'olivia@talk.example' });
  });

  it('stores line breaks as \\n, and shows web addresses as links and all else as text', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/c/open-anon');
    const text = 'See https://example.com/docs?a=1&b=2 or example.org.\r\n<b>bold</b> javascript:alert(1)\r\nend';
    const posted = await v.post('/c/open-anon', { csrf: v.hidden('csrf'), submit: v.hidden('submit'), text });
    expect(posted.status).toBe(303);
    const stored = (await api('open-anon')).messages.at(-1);
    expect(stored.text).toBe(
      'See https://example.com/docs?a=1&b=2 or example.org.\n<b>bold</b> javascript:alert(1)\nend',
    );
    const page = await v.get('/c/open-anon');
    const all = elements(page.html);
    const article = present(
      all.find((e) => e.tagName === 'article' && attr(e, 'id') === `message-${stored.id}`),
      'the message',
    );
    const body = present(
      all.find((e) => e.tagName === 'p' && attr(e, 'class') === 'text' && e.parentNode === article),
      "the message's text",
    );
    const inside = all.filter((e) => e.tagName === 'a' && e.parentNode === body);
    expect(inside.map((a) => [attr(a, 'href'), attr(a, 'rel'), textOf(a)])).toEqual([
      ['https://example.com/docs?a=1&b=2', 'nofollow ugc noopener', 'https://example.com/docs?a=1&b=2'],
      ['http://example.org/', 'nofollow ugc noopener', 'example.org'],
    ]);
    expect(page.html).toContain('&lt;b&gt;bold&lt;/b&gt; javascript:alert(1)');
    expect(elements(page.html).some((e) => e.tagName === 'b')).toBe(false);
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
  it("brings a member back from a private conversation's 404 to the conversation itself", async () => {
    const v = new Visitor(h, HOST);
    const hidden = await v.get('/c/private-anon');
    expect(hidden.status).toBe(404);
    const signIn = present(elements(hidden.html).find((e) => e.tagName === 'a' && textOf(e) === 'Sign in'));
    expect(attr(signIn, 'href')).toBe('/sign-in?return=/c/private-anon');
    // The form the link opens keeps the way back, and the mailed link leads there.
    await v.get(present(attr(signIn, 'href')));
    const asked = await v.post('/sign-in', {
      csrf: v.hidden('csrf'),
      email: 'olivia@talk.example',
      return: v.hidden('return'),
    });
    expect(asked.status).toBe(200);
    const opened = await v.confirm(signInLink(await mailbox.next('olivia@talk.example')));
    expect(location(opened)).toBe('/c/private-anon');
    expect((await v.get('/c/private-anon')).status).toBe(200);
  });

  it('answers the same whether or not the address is a user; the link tells only its opener', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/sign-in');
    const csrf = v.hidden('csrf');
    const known = await v.post('/sign-in', { csrf, email: 'nora@talk.example', return: '/' });
    const unknown = await v.post('/sign-in', { csrf, email: 'nobody@talk.example', return: '/' });
    expect(known.status).toBe(200);
    expect(fingerprint(unknown)).toEqual(fingerprint(known));
    const toKnown = await mailbox.next('nora@talk.example');
    const toUnknown = await mailbox.next('nobody@talk.example');
    // The same mail but for its link.
    // The mail after its headers, without its link's token and its parts' boundaries (random per mail).
    const body = (m: { text: string }) =>
      m.text
        .slice(m.text.indexOf('\r\n\r\n'))
        .replace(/sign-in\/[\w-]+/g, '')
        .replace(/^--.*$/gm, '');
    expect(body(toUnknown)).toBe(body(toKnown));
    // The new address's opener is asked for a name, and becomes a user by confirming.
    const newcomer = new Visitor(h, HOST);
    const page = await newcomer.get(new URL(signInLink(toUnknown)).pathname);
    expect(page.html).toContain('Nobody here uses nobody@talk.example yet');
    const noName = await newcomer.post(new URL(signInLink(toUnknown)).pathname, { csrf: newcomer.hidden('csrf') });
    expect(noName.status).toBe(422);
    expect(noName.html).toContain('Give your name.');
    const joined = await newcomer.post(new URL(signInLink(toUnknown)).pathname, {
      csrf: newcomer.hidden('csrf'),
      name: 'Nobody Yet',
    });
    expect(joined.status).toBe(303);
    expect((await newcomer.get('/c/open-anon')).html).toContain('Signed in as Nobody Yet');
  });

  it("does the same work for a user's address and a stranger's, on sign-in and on a named reply", async () => {
    /** The statements one form post runs, with its values left out. */
    const work = async (post: (v: Visitor) => Promise<unknown>) => {
      const v = new Visitor(h, HOST);
      await v.get('/c/open-named');
      h.statements.length = 0;
      await post(v);
      // The statements' shapes: the values (the address among them) left out; left out too, the
      // account's host lookup (remembered for a few seconds, whatever the address) and what the
      // mail worker runs meanwhile in the background.
      return h.statements
        .filter((sql) => !/from "?account"? where "?host"?|update outgoing_mail set/.test(sql))
        .map((sql) => sql.replace(/'(?:[^']|'')*'/g, '?').replace(/\b\d+\b/g, 'N'));
    };
    const signIn = (email: string) => (v: Visitor) =>
      v.post('/sign-in', { csrf: v.hidden('csrf'), email, return: '/' });
    const knownSignIn = await work(signIn('nora@talk.example'));
    const strangerSignIn = await work(signIn('stranger@talk.example'));
    const reply = (email: string) => (v: Visitor) =>
      v.post('/c/open-named', { csrf: v.hidden('csrf'), submit: v.hidden('submit'), text: 'Hi', name: 'N', email });
    const known = await work(reply('nora@talk.example'));
    const stranger = await work(reply('another-stranger@talk.example'));
    // Every mail taken first, so that a failure here leaves none for the tests after it.
    for (const to of [
      'nora@talk.example',
      'stranger@talk.example',
      'nora@talk.example',
      'another-stranger@talk.example',
    ]) {
      await mailbox.next(to);
    }
    expect(strangerSignIn).toEqual(knownSignIn);
    expect(stranger).toEqual(known);
    expect(known.some((sql) => /from account_user/.test(sql))).toBe(false);
  });

  it('gives a session cookie that is HttpOnly, SameSite=Lax and Secure on an https host; the link works once', async () => {
    const v = new Visitor(h, HOST);
    await v.get('/sign-in');
    await v.post('/sign-in', { csrf: v.hidden('csrf'), email: 'nora@talk.example', return: '/c/open-anon' });
    const link = new URL(signInLink(await mailbox.next('nora@talk.example'))).pathname;
    const opened = await v.confirm(link);
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

  it('signs out: the old cookie no longer signs anyone in', async () => {
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

  it('signs out everywhere: every device of that person, and nobody else', async () => {
    const phone = await signedIn('nora@talk.example');
    const laptop = await signedIn('nora@talk.example');
    const someoneElse = await signedIn('olivia@talk.example');
    // Another process of the same database: sessions end there too.
    const { secondApp } = await import('./support/harness.ts');
    const replica = { ...h, app: secondApp(h) };
    const onReplica = new Visitor(replica, HOST);
    onReplica.cookies.set('convo_session', present(laptop.cookies.get('convo_session')));
    expect((await onReplica.get('/c/open-anon')).html).toContain('Signed in as Nora Nonmember');
    const page = await phone.get('/c/open-anon');
    const form = elements(page.html).find((e) => e.tagName === 'form' && attr(e, 'action') === '/sign-out');
    expect(form).toBeDefined();
    const out = await phone.post('/sign-out', { csrf: phone.hidden('csrf'), return: '/c/open-anon', everywhere: '1' });
    expect(out.status).toBe(303);
    for (const device of [phone, laptop, onReplica]) {
      expect((await device.get('/c/open-anon')).html).not.toContain('Signed in as');
    }
    expect((await someoneElse.get('/c/open-anon')).html).toContain('Signed in as Olivia Owner');
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

describe('a mailed link acts only on its POST', () => {
  /** A reply under Olivia's address, as someone else sends it, and the link mailed to her. */
  async function impostorLink(text: string): Promise<string> {
    const impostor = new Visitor(h, HOST);
    expect((await impostor.reply('open-named', { text, name: 'Olivia', email: 'olivia@talk.example' })).status).toBe(
      200,
    );
    return new URL(signInLink(await mailbox.next('olivia@talk.example'))).pathname;
  }

  it('GET and HEAD (mail scanners, link checkers) show the pending text and change nothing', async () => {
    const link = await impostorLink('Text Olivia never wrote');
    const before = await messageCount();
    const scanner = new Visitor(h, HOST);
    const head = await h.app.fetch(new Request(`${HOST}${link}`, { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(head.headers.getSetCookie().some((c) => c.startsWith('convo_session='))).toBe(false);
    const page = await scanner.get(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.getSetCookie().some((c) => c.startsWith('convo_session='))).toBe(false);
    const quote = elements(page.html).find((e) => e.tagName === 'blockquote');
    expect(quote && textOf(quote)).toBe('Text Olivia never wrote');
    expect(page.html).toContain('Olivia Owner');
    expect(await messageCount()).toBe(before);
    // Still usable, once, by its POST.
    const csrf = scanner.hidden('csrf');
    const posted = await scanner.post(link, { csrf });
    expect(posted.status).toBe(303);
    expect(await messageCount()).toBe(before + 1);
    expect((await scanner.get(link)).status).toBe(410);
  });

  it("refuses a POST without this device's CSRF token or from another site: no login CSRF", async () => {
    const asker = new Visitor(h, HOST);
    await asker.get('/sign-in');
    const askerCsrf = asker.hidden('csrf');
    await asker.post('/sign-in', { csrf: askerCsrf, email: 'nora@talk.example', return: '/' });
    const link = new URL(signInLink(await mailbox.next('nora@talk.example'))).pathname;
    // Another site's form, posted by a visitor's browser: no token of theirs, or a foreign Origin.
    const victim = new Visitor(h, HOST);
    await victim.get('/c/open-anon');
    expect((await victim.post(link, {}, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await victim.post(link, { csrf: askerCsrf })).status).toBe(403);
    expect((await victim.post(link, {})).status).toBe(403);
    expect(victim.cookies.has('convo_session')).toBe(false);
    expect((await victim.get('/c/open-anon')).html).not.toContain('Signed in as');
    // The link was not spent by any of that.
    expect((await asker.confirm(link)).status).toBe(303);
  });

  it('keeps link tokens out of the request log', async () => {
    const lines: string[] = [];
    const logged = await openHarness({ logTo: { write: (line) => lines.push(line) } });
    try {
      await loadSeed(logged.db.orm.em.fork(), {
        accounts: [{ key: 'log', name: 'Log', host: 'https://log.example.com', conversations: [] }],
      });
      const token = 'x'.repeat(43);
      await logged.app.fetch(new Request(`https://log.example.com/sign-in/${token}`));
      await logged.app.fetch(new Request(`https://log.example.com/sign-in/${token}`, { method: 'POST' }));
      expect(lines.join('\n')).toContain('/sign-in/[token]');
      expect(lines.join('\n')).not.toContain(token);
    } finally {
      await logged.close();
    }
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
    const site = async (perIpPerMinute: number, perEmailPer15Minutes: number, unconfirmedMailPerAccountPerHour = 0) => {
      const limited = await openHarness({
        app: { site: { limits: { perIpPerMinute, perEmailPer15Minutes, unconfirmedMailPerAccountPerHour } } },
      });
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
    // Per account: mail to addresses nobody has confirmed (sign-in links, named replies) has a
    // budget an hour, whatever the addresses and whoever asks.
    const byAccount = await site(0, 0, 3);
    try {
      const asked: number[] = [];
      for (let i = 0; i < 3; i++) {
        const someone = new Visitor(byAccount, 'https://few.example.com');
        await someone.get('/sign-in');
        asked.push(
          (await someone.post('/sign-in', { csrf: someone.hidden('csrf'), email: `n${i}@else.example` })).status,
        );
      }
      const replier = new Visitor(byAccount, 'https://few.example.com');
      const reply = await replier.reply('x', { text: 'Hello', name: 'N', email: 'n9@else.example' });
      asked.push(reply.status);
      expect(asked).toEqual([200, 200, 200, 429]);
      expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
      const [queued] = await byAccount.db.orm.em
        .fork()
        .getConnection()
        .execute('select count(*)::int as n from outgoing_mail');
      expect(queued.n).toBe(3);
    } finally {
      await byAccount.close();
    }
  });

  it('counts the address a trusted proxy appended, never what the client wrote in X-Forwarded-For', async () => {
    const host = 'https://hops.example.com';
    const statuses = async (proxyHops: number, xff: (i: number) => string, peer = '10.1.1.1') => {
      const limited = await openHarness({
        app: {
          site: { limits: { perIpPerMinute: 3, perEmailPer15Minutes: 0 } },
          http: { proxies: { hops: proxyHops } },
        },
      });
      try {
        await loadSeed(limited.db.orm.em.fork(), {
          accounts: [
            {
              key: 'hops',
              name: 'Hops',
              host,
              conversations: [{ slug: 'x', title: 'X', allow_anonymous_messages: true }],
            },
          ],
        });
        const v = new Visitor(limited, host);
        await v.get('/c/x');
        const csrf = v.hidden('csrf');
        const out: number[] = [];
        for (let i = 0; i < 5; i++) {
          const res = await limited.app.fetch(
            new Request(`${host}/c/x`, {
              method: 'POST',
              headers: {
                cookie: [...v.cookies].map(([k, val]) => `${k}=${val}`).join('; '),
                origin: host,
                'content-type': 'application/x-www-form-urlencoded',
                'x-forwarded-for': xff(i),
              },
              body: new URLSearchParams({ csrf, text: `n${i}` }).toString(),
            }),
            { clientIp: peer },
          );
          out.push(res.status);
        }
        return out;
      } finally {
        await limited.close();
      }
    };
    const limitedAfterThree = [303, 303, 303, 429, 429];
    // Without TRUST_PROXY the header is ignored: the socket's address counts.
    expect(await statuses(0, (i) => `203.0.113.${i}`)).toEqual(limitedAfterThree);
    // Behind one proxy that appends (nginx's $proxy_add_x_forwarded_for): a forged left-most entry changes nothing.
    expect(await statuses(1, (i) => `198.51.100.${i}, 203.0.113.7`)).toEqual(limitedAfterThree);
    // ... and each real client, as the proxy wrote it, has a quota of its own.
    expect(await statuses(1, (i) => `198.51.100.9, 203.0.113.${i}`)).toEqual([303, 303, 303, 303, 303]);
    // An IPv6 client owns its whole /64: addresses in one count as one client; other /64s do not.
    expect(await statuses(1, (i) => `2001:db8:7:9::${i + 1}`)).toEqual(limitedAfterThree);
    expect(await statuses(1, (i) => `2001:db8:7:${i + 1}::1`)).toEqual([303, 303, 303, 303, 303]);
    // An IPv4 address written as IPv6 is that IPv4 client.
    expect(await statuses(1, (i) => (i % 2 ? '203.0.113.7' : '::ffff:203.0.113.7'))).toEqual(limitedAfterThree);
    // Behind two (a CDN, then nginx): the second entry from the right is the client.
    expect(await statuses(2, (i) => `198.51.100.${i}, 203.0.113.7, 192.0.2.1`)).toEqual(limitedAfterThree);
    expect(await statuses(2, (i) => `198.51.100.9, 203.0.113.${i}, 192.0.2.1`)).toEqual([303, 303, 303, 303, 303]);
    // Nine sites of their own, each a throwaway database: more than the default 30 s on a busy machine.
  }, 120_000);

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
