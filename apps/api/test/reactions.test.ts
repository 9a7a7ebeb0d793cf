import { ZMessageReactionsAnswer, ZReactionAddedEvent } from '@convo/domain';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import { listen, openStream } from './support/events.ts';
import { apiCall, auth, type Harness, rows, until } from './support/harness.ts';
import { mailTo, openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { attr, elements, messageIdOf, Visitor } from './support/site.ts';
import { openReceiver } from './support/webhooks.ts';
import { awayFromWindowEnd } from './support/windows.ts';

/*
 * Reactions (issue 42): a fixed set of emoji on any message, once of each kind per person (a
 * visitor nobody knows by session, where the conversation takes anonymous messages). Walked as a
 * visitor, a participant, the team and another account, through the page's form without
 * JavaScript (and its in-place answer), the live stream, the API, the webhook and the digest, with
 * the form forged every way a hostile client would.
 */

const HOST = 'https://reactions.example.com';
const OTHER_HOST = 'https://elsewhere.example.com';
const TOKEN = 'reactions-site-token-0123456789';
const OTHER_TOKEN = 'elsewhere-token-0123456789';
/** The reactions one address may change a minute here. */
const REACTION_LIMIT = 60;

let site: PeopleSite;
let h: Harness;
let listener: { close(): Promise<void> };
let receiver: Awaited<ReturnType<typeof openReceiver>>;
let owner: Visitor;
let teammate: Visitor;
let pia: Visitor;
let quinn: Visitor;
let stranger: Visitor;
/** The teammate's message and Pia's in the public conversation; the owner's in the private one; a note; a signed-in-only one's. */
let team: number;
let piaOwn: number;
let secret: number;
let note: number;
let closed: number;

const sql = <T>(text: string, params: unknown[] = []) => rows<T>(h, text, params);
const count = async () => Number((await sql<{ n: number }>('select count(*)::int as n from message_reaction'))[0]?.n);

/** A text message posted from the page; its id. */
async function posted(v: Visitor, slug: string, text: string, fields: Record<string, string> = {}) {
  const res = await v.reply(slug, { text, ...fields });
  expect(res.status).toBe(303);
  return messageIdOf(res.headers.get('location'));
}

/** The reactions form's buttons under a message, as the page wrote them: `name value pressed` each. */
function buttons(html: string, id: number) {
  const start = html.indexOf(`id="reactions-${id}"`);
  if (start < 0) return null;
  const form = html.slice(start, html.indexOf('</form>', start));
  return elements(form)
    .filter((e) => e.tagName === 'button')
    .map((e) => `${attr(e, 'name')} ${attr(e, 'value')} ${attr(e, 'aria-pressed')}`);
}

/** What the reactions under a message say to a screen reader ("Thumbs up: 2 reactions, …"), in order. */
function said(html: string, id: number): string[] | null {
  const start = html.indexOf(`id="reactions-${id}"`);
  if (start < 0) return null;
  const form = html.lastIndexOf('<', start) === html.lastIndexOf('<form', start);
  const block = html.slice(start, html.indexOf(form ? '</form>' : '</ul>', start));
  // The kinds chosen (the set, when it is open, says what each button does).
  const chosen = block.includes('class="picker"') ? block.slice(0, block.indexOf('class="picker"')) : block;
  return [...chosen.matchAll(/<span class="visually-hidden">([^<]*)<\/span>/g)].map((m) => m[1] ?? '');
}

/** Reacts as the page's form does: the page read first (its token), then one button. */
async function react(
  v: Visitor,
  slug: string,
  id: number,
  field: 'add' | 'remove',
  name: string,
  o: { csrf?: string; origin?: string | null; extra?: Record<string, string> } = {},
) {
  // A page it may not read (a private conversation's 404) has no form: the token from one it may.
  if ((await v.get(`/c/${slug}`)).status !== 200) await v.get('/c/onboarding');
  const csrf = o.csrf ?? v.hidden('csrf');
  return v.post(`/c/${slug}/messages/${id}/reactions`, { csrf, [field]: name, ...o.extra }, { origin: o.origin });
}

beforeAll(async () => {
  site = await openPeopleSite(
    {
      accounts: [
        {
          key: 'reactions',
          name: 'Reactions Co',
          host: HOST,
          owner: 'olive@reactions.example',
          users: [
            { email: 'olive@reactions.example', name: 'Olive Owner' },
            { email: 'tim@reactions.example', name: 'Tim Teammate', team: 'member' },
            { email: 'pia@else.example', name: 'Pia Participant' },
            { email: 'quinn@else.example', name: 'Quinn Participant' },
          ],
          tokens: [{ name: 'tests', token: TOKEN }],
          conversations: [
            {
              title: 'Onboarding',
              slug: 'onboarding',
              anyone_can_post: true,
              allow_anonymous_messages: true,
              members: ['olive@reactions.example', 'tim@reactions.example', 'pia@else.example', 'quinn@else.example'],
            },
            {
              title: 'Private matters',
              slug: 'private',
              anyone_can_post: false,
              members: ['olive@reactions.example', 'pia@else.example'],
            },
            {
              title: 'Signed in only',
              slug: 'signed-in',
              anyone_can_post: true,
              allow_anonymous_messages: false,
              members: ['olive@reactions.example'],
            },
          ],
        },
        {
          key: 'elsewhere',
          name: 'Elsewhere',
          host: OTHER_HOST,
          owner: 'yara@elsewhere.example',
          users: [{ email: 'yara@elsewhere.example', name: 'Yara Elsewhere' }],
          tokens: [{ name: 'tests', token: OTHER_TOKEN }],
        },
      ],
    },
    {
      services: { webhookTargets: { allowHttp: true, allowPrivate: true } },
      app: {
        site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000, reactionsPerIpPerMinute: REACTION_LIMIT } },
      },
    },
  );
  h = site.h;
  listener = listen(h);
  receiver = await openReceiver(h, TOKEN, ['reaction_added']);

  owner = await signIn(site, HOST, 'olive@reactions.example');
  teammate = await signIn(site, HOST, 'tim@reactions.example');
  pia = await signIn(site, HOST, 'pia@else.example');
  quinn = await signIn(site, HOST, 'quinn@else.example');
  stranger = await signIn(site, OTHER_HOST, 'yara@elsewhere.example');

  team = await posted(teammate, 'onboarding', 'Welcome aboard');
  piaOwn = await posted(pia, 'onboarding', 'Glad to be here');
  secret = await posted(owner, 'private', 'Just between us');
  note = await posted(teammate, 'onboarding', 'Pia is on the paid plan', { internal: 'true' });
  closed = await posted(owner, 'signed-in', 'Members and signed-in people only');
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await listener?.close();
  h?.services.live.close();
  await site?.close();
});

describe('reactions on the page, without JavaScript', () => {
  it('adds a reaction once per person, shows it pressed, takes it back; the page comes back at the message', async () => {
    const before = await pia.get('/c/onboarding');
    // Nothing yet: "React" alone, a link to the set's own page, where every kind is offered.
    expect(buttons(before.html, team)).toEqual([]);
    expect(before.html).toContain(`<a class="react-link" href="/c/onboarding/messages/${team}/reactions">React</a>`);
    const set = await pia.get(`/c/onboarding/messages/${team}/reactions`);
    expect(set.status).toBe(200);
    expect(set.html).toContain('<h1>React to a message</h1>');
    expect(set.html).toContain('Welcome aboard');
    expect(buttons(set.html, team)).toEqual([
      'add thumbs_up false',
      'add heart false',
      'add laugh false',
      'add celebrate false',
      'add surprised false',
      'add thinking false',
    ]);
    // Sent from the set's page, the answer is the conversation, at the message.
    const added = await pia.post(`/c/onboarding/messages/${team}/reactions`, {
      csrf: pia.hidden('csrf'),
      add: 'thumbs_up',
    });
    expect([added.status, added.headers.get('location')]).toEqual([303, `/c/onboarding#message-${team}`]);
    // The same button again (a double click, a form sent twice): still one.
    expect((await react(pia, 'onboarding', team, 'add', 'thumbs_up')).status).toBe(303);
    const after = (await pia.get('/c/onboarding')).html;
    // Its pill under the message; on the set's page, pressed there too (both take it back).
    expect(buttons(after, team)).toEqual(['remove thumbs_up true']);
    const again = (await pia.get(`/c/onboarding/messages/${team}/reactions`)).html;
    expect(buttons(again, team)?.slice(0, 3)).toEqual([
      'remove thumbs_up true',
      'remove thumbs_up true',
      'add heart false',
    ]);
    expect(said(after, team)).toEqual(['Thumbs up: 1 reaction, yours among them']);
    // Another person's view: counted, not theirs.
    expect(said((await quinn.get('/c/onboarding')).html, team)).toEqual(['Thumbs up: 1 reaction']);
    // From a thread's page the answer goes back there.
    await pia.get(`/c/onboarding/m/${team}`);
    const fromThread = await h.app.fetch(
      new Request(`${HOST}/c/onboarding/messages/${team}/reactions`, {
        method: 'POST',
        headers: {
          ...pia.cookieHeader(),
          origin: HOST,
          referer: `${HOST}/c/onboarding/m/${team}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ csrf: pia.hidden('csrf'), add: 'heart' }).toString(),
      }),
    );
    expect([fromThread.status, fromThread.headers.get('location')]).toEqual([
      303,
      `/c/onboarding/m/${team}#message-${team}`,
    ]);
    expect((await react(pia, 'onboarding', team, 'remove', 'heart')).status).toBe(303);
    expect((await react(pia, 'onboarding', team, 'remove', 'thumbs_up')).status).toBe(303);
    expect(said((await pia.get('/c/onboarding')).html, team)).toEqual([]);
    expect(await count()).toBe(0);
  });

  it('counts visitors by session where anonymous messages are taken; names people to the team alone', async () => {
    const visitor = new Visitor(h, HOST);
    const another = new Visitor(h, HOST);
    expect((await react(visitor, 'onboarding', piaOwn, 'add', 'heart')).status).toBe(303);
    expect((await react(visitor, 'onboarding', piaOwn, 'add', 'heart')).status).toBe(303);
    expect((await react(another, 'onboarding', piaOwn, 'add', 'heart')).status).toBe(303);
    expect((await react(quinn, 'onboarding', piaOwn, 'add', 'heart')).status).toBe(303);
    expect((await react(quinn, 'onboarding', piaOwn, 'add', 'celebrate')).status).toBe(303);
    expect(said((await visitor.get('/c/onboarding')).html, piaOwn)).toEqual([
      'Heart: 3 reactions, yours among them',
      'Celebrate: 1 reaction',
    ]);
    expect(said((await pia.get('/c/onboarding')).html, piaOwn)).toEqual([
      'Heart: 3 reactions',
      'Celebrate: 1 reaction',
    ]);
    for (const v of [owner, teammate]) {
      expect(said((await v.get('/c/onboarding')).html, piaOwn)).toEqual([
        'Heart: 3 reactions (Quinn Participant)',
        'Celebrate: 1 reaction (Quinn Participant)',
      ]);
    }
  });

  it('keeps a signed-in-only conversation’s reactions to people who sign in; shows visitors the counts alone', async () => {
    expect((await react(pia, 'signed-in', closed, 'add', 'laugh')).status).toBe(303);
    const visitor = new Visitor(h, HOST);
    const page = await visitor.get('/c/signed-in');
    expect(page.html).not.toContain(`<form class="reactions" id="reactions-${closed}"`);
    expect(said(page.html, closed)).toEqual(['Laugh: 1 reaction']);
    const refused = await visitor.post(`/c/signed-in/messages/${closed}/reactions`, {
      csrf: visitor.hidden('csrf'),
      add: 'laugh',
    });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('Sign in to react');
    // "React" leads them to the set's page, which says how.
    const set = await visitor.get(`/c/signed-in/messages/${closed}/reactions`);
    expect(set.html).toContain('Sign in to react');
    expect(buttons(set.html, closed)).toEqual([]);
    expect(said((await visitor.get('/c/signed-in')).html, closed)).toEqual(['Laugh: 1 reaction']);
  });

  it('refuses a forged or misdirected reaction, and changes nothing', async () => {
    const visitor = new Visitor(h, HOST);
    const before = await count();
    await pia.get('/c/onboarding');
    const piaToken = pia.hidden('csrf');
    // No token, another's token, from another site.
    expect((await react(visitor, 'onboarding', team, 'add', 'heart', { csrf: 'forged' })).status).toBe(403);
    expect((await react(visitor, 'onboarding', team, 'add', 'heart', { csrf: piaToken })).status).toBe(403);
    expect((await react(pia, 'onboarding', team, 'add', 'heart', { origin: 'https://evil.example' })).status).toBe(403);
    // Not one of the set, two at once, none.
    expect((await react(pia, 'onboarding', team, 'add', 'poop')).status).toBe(422);
    expect((await react(pia, 'onboarding', team, 'add', '<script>')).status).toBe(422);
    expect((await react(pia, 'onboarding', team, 'add', 'heart', { extra: { remove: 'laugh' } })).status).toBe(422);
    expect((await pia.post(`/c/onboarding/messages/${team}/reactions`, { csrf: piaToken })).status).toBe(422);
    // A private conversation's message by someone not in it; a note by a participant; a visitor there.
    expect((await react(visitor, 'private', secret, 'add', 'heart')).status).toBe(404);
    expect((await react(quinn, 'onboarding', secret, 'add', 'heart')).status).toBe(404);
    expect((await react(pia, 'onboarding', note, 'add', 'heart')).status).toBe(404);
    expect((await react(visitor, 'onboarding', note, 'add', 'heart')).status).toBe(404);
    // Another conversation's slug, another account's host, a message that is not there.
    expect((await react(pia, 'private', team, 'add', 'heart')).status).toBe(404);
    await stranger.get('/new');
    expect(
      (await stranger.post(`/c/onboarding/messages/${team}/reactions`, { csrf: stranger.hidden('csrf'), add: 'heart' }))
        .status,
    ).toBe(404);
    expect((await react(pia, 'onboarding', 2_000_000_000, 'add', 'heart')).status).toBe(404);
    expect((await react(pia, 'onboarding', Number('99999999999'), 'add', 'heart')).status).toBe(404);
    // The reactions of a message one may not see are not read either.
    for (const q of ['', '?fragment=1']) {
      expect((await quinn.get(`/c/onboarding/messages/${secret}/reactions${q}`)).status).toBe(404);
      expect((await pia.get(`/c/onboarding/messages/${note}/reactions${q}`)).status).toBe(404);
      expect((await visitor.get(`/c/private/messages/${secret}/reactions${q}`)).status).toBe(404);
    }
    expect(await count()).toBe(before);
    // The team reacts on its note; a member of the private conversation there.
    expect((await react(teammate, 'onboarding', note, 'add', 'thinking')).status).toBe(303);
    expect((await react(pia, 'private', secret, 'add', 'thumbs_up')).status).toBe(303);
    expect(await count()).toBe(before + 2);
  });

  it('answers the reactions alone to the page’s script, and tells every page showing the message, live', async () => {
    const ownerStream = await openStream(h, `${HOST}/c/onboarding/events`, owner.cookieHeader());
    const quinnStream = await openStream(h, `${HOST}/c/onboarding/events`, quinn.cookieHeader());
    // The set opened in place, and a reaction from it: the answer keeps it open.
    const opened = await pia.get(`/c/onboarding/messages/${team}/reactions?fragment=1&picker=inline`);
    // The six, and "Done".
    expect(buttons(opened.html, team)).toHaveLength(7);
    expect(opened.html).toContain('<button type="button" class="secondary small react-done">Done</button>');
    const inPlace = await react(pia, 'onboarding', team, 'add', 'surprised', {
      extra: { fragment: '1', picker: 'inline' },
    });
    expect(inPlace.status).toBe(200);
    expect(inPlace.html.startsWith(`<form class="reactions" id="reactions-${team}"`)).toBe(true);
    expect(said(inPlace.html, team)).toEqual(['Surprised: 1 reaction, yours among them']);
    expect(buttons(inPlace.html, team)).toHaveLength(8);
    const about = (id: number) => (e: { event?: string; data?: string }) =>
      e.event === 'reacted' && JSON.parse(e.data ?? '{}').message_id === id;
    await ownerStream.next(about(team));
    await quinnStream.next(about(team));
    // What the live update reads, as each reader meets it.
    expect(said((await quinn.get(`/c/onboarding/messages/${team}/reactions?fragment=1`)).html, team)).toEqual([
      'Surprised: 1 reaction',
    ]);
    expect(said((await owner.get(`/c/onboarding/messages/${team}/reactions?fragment=1`)).html, team)).toEqual([
      'Surprised: 1 reaction (Pia Participant)',
    ]);
    // A note's reactions are the team's: a participant's stream is not told.
    expect((await react(owner, 'onboarding', note, 'add', 'heart')).status).toBe(303);
    await ownerStream.next(about(note));
    await expect(quinnStream.next(about(note), 300)).rejects.toThrow();
    ownerStream.close();
    quinnStream.close();
  });
});

describe('reactions in the API and webhooks', () => {
  it('adds and takes back a reaction as one of the team; get_messages shows them as add_reaction answers', async () => {
    const add = await apiCall(h, 'POST', '/messages/add_reaction', auth(TOKEN), {
      message_id: piaOwn,
      reaction: 'celebrate',
      user_email: 'OLIVE@reactions.example',
    });
    expect(add.status).toBe(200);
    expect(ZMessageReactionsAnswer.parse(add.body)).toEqual(add.body);
    expect(add.body).toEqual({
      message_id: piaOwn,
      reactions: [
        {
          reaction: 'heart',
          emoji: '❤️',
          count: 3,
          users: [{ id: expect.any(Number), email: 'quinn@else.example', name: 'Quinn Participant' }],
        },
        {
          reaction: 'celebrate',
          emoji: '🎉',
          count: 2,
          users: [
            { id: expect.any(Number), email: 'quinn@else.example', name: 'Quinn Participant' },
            { id: expect.any(Number), email: 'olive@reactions.example', name: 'Olive Owner' },
          ],
        },
      ],
    });
    const again = await apiCall(h, 'POST', '/messages/add_reaction', auth(TOKEN), {
      message_id: piaOwn,
      reaction: 'celebrate',
      user_email: 'olive@reactions.example',
    });
    expect(again.body).toEqual(add.body);
    const messages = await apiCall(h, 'GET', '/messages/get_messages?conversation_slug=onboarding', auth(TOKEN));
    const listed = messages.body.messages.find((m: { id: number }) => m.id === piaOwn);
    expect(listed.reactions).toEqual(add.body.reactions);
    expect(messages.body.messages.find((m: { id: number }) => m.id === closed)).toBeUndefined();
    // The spec'd operations carry none.
    const spec = await apiCall(h, 'GET', '/conversations/get_conversation?slug=onboarding', auth(TOKEN));
    expect(spec.body.messages.map((m: object) => 'reactions' in m)).toEqual([false, false]);

    const removed = await apiCall(h, 'POST', '/messages/remove_reaction', auth(TOKEN), {
      message_id: piaOwn,
      reaction: 'celebrate',
      user_email: 'olive@reactions.example',
    });
    expect(removed.status).toBe(200);
    expect(removed.body.reactions.map((r: { count: number }) => r.count)).toEqual([3, 1]);
    const none = await apiCall(h, 'POST', '/messages/remove_reaction', auth(TOKEN), {
      message_id: piaOwn,
      reaction: 'celebrate',
      user_email: 'olive@reactions.example',
    });
    expect(none.body).toEqual(removed.body);
  });

  it('refuses what is not the account’s, not the set, or nobody on its team; changes nothing', async () => {
    const before = await count();
    const cases: [string, Record<string, unknown>, number, string][] = [
      [TOKEN, { message_id: piaOwn, reaction: 'poop', user_email: 'olive@reactions.example' }, 422, 'invalid_input'],
      [TOKEN, { message_id: piaOwn, reaction: 'heart', user_email: 'pia@else.example' }, 422, 'invalid_input'],
      [TOKEN, { message_id: piaOwn, reaction: 'heart' }, 422, 'invalid_input'],
      [TOKEN, { message_id: 0, reaction: 'heart', user_email: 'olive@reactions.example' }, 422, 'invalid_input'],
      [
        TOKEN,
        { message_id: 2_000_000_000, reaction: 'heart', user_email: 'olive@reactions.example' },
        404,
        'message_not_found',
      ],
      [
        OTHER_TOKEN,
        { message_id: piaOwn, reaction: 'heart', user_email: 'yara@elsewhere.example' },
        404,
        'message_not_found',
      ],
    ];
    for (const [token, body, status, code] of cases) {
      for (const path of ['/messages/add_reaction', '/messages/remove_reaction']) {
        const res = await apiCall(h, 'POST', path, auth(token), body);
        expect([path, res.status, res.body.code]).toEqual([path, status, code]);
      }
    }
    expect((await apiCall(h, 'POST', '/messages/add_reaction', {}, { message_id: piaOwn })).status).toBe(401);
    expect(await count()).toBe(before);
  });

  it('sends reaction_added once per reaction added, signed, as its schema says', async () => {
    const expected = Number(
      (await sql<{ n: number }>(`select count(*)::int as n from webhook_event where type = 'reaction_added'`))[0]?.n,
    );
    expect(expected).toBeGreaterThan(5);
    await until(() => receiver.received.length >= expected, 15_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received.length).toBe(expected);
    const wh = new Webhook(receiver.secret);
    const bodies = receiver.received.map((r) =>
      ZReactionAddedEvent.parse(wh.verify(r.body, r.headers as Record<string, string>)),
    );
    const owners = bodies.filter((b) => b.data.message_id === piaOwn && b.data.reaction === 'celebrate');
    expect(owners.map((b) => b.data.user)).toContainEqual({
      anonymous: false,
      id: expect.any(Number),
      name: 'Olive Owner',
      email: 'olive@reactions.example',
    });
    const visitors = bodies.filter((b) => b.data.message_id === piaOwn && b.data.reaction === 'heart');
    expect(visitors.filter((b) => b.data.user.anonymous).length).toBe(2);
    expect(visitors[0]?.data).toMatchObject({ emoji: '❤️', conversation_id: expect.any(Number) });
  });
});

describe('reactions in the mail digest', () => {
  it('tells the author, batched with the rest, never of their own, and stops with the conversation’s mail', async () => {
    const notify = startNotifyWorker(h.services.notifications, h.services.secrets, {
      batchSeconds: 1,
      logger: createLogger('silent'),
      intervalMs: 50,
    });
    const told = /reacted|reactions to your/;
    const timMails = () =>
      site.mailbox.mails.filter((m) => m.to.includes('tim@reactions.example') && told.test(m.text));
    try {
      // What the earlier tests left to tell goes out first: this test reads the mail that follows.
      await until(async () => {
        const [left] = await sql<{ n: number }>(
          `select (select count(*) from notify_event) + (select count(*) from notification_digest)
             + (select count(*) from outgoing_mail where sent_at is null) as n`,
        );
        return Number(left?.n) === 0;
      }, 20_000);
      site.mailbox.mails.splice(0);
      const fresh = await posted(teammate, 'onboarding', 'Here is the plan for week one');
      // Tim's own reaction is no news to him; a reaction taken back before the mail goes is none.
      expect((await react(teammate, 'onboarding', fresh, 'add', 'thumbs_up')).status).toBe(303);
      expect((await react(quinn, 'onboarding', fresh, 'add', 'laugh')).status).toBe(303);
      expect((await react(quinn, 'onboarding', fresh, 'remove', 'laugh')).status).toBe(303);
      expect((await react(pia, 'onboarding', fresh, 'add', 'celebrate')).status).toBe(303);
      expect((await react(new Visitor(h, HOST), 'onboarding', fresh, 'add', 'heart')).status).toBe(303);
      const mail = await mailTo(site.mailbox, 'tim@reactions.example', told);
      expect(mail.text).toContain('\n2 reactions to your messages in "Onboarding" on Reactions Co:');
      expect(mail.text).toContain('Pia Participant reacted 🎉 to your message');
      expect(mail.text).toContain('A visitor reacted ❤️ to your message');
      expect(mail.text).not.toContain('👍');
      expect(mail.text).not.toContain('😂');
      expect(mail.text).toContain('> Here is the plan for week one');
      expect(mail.text).toContain(`${HOST}/c/onboarding#message-${fresh}`);
      // Others are not told of reactions to Tim's message.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(site.mailbox.mails.filter((m) => !m.to.includes('tim@reactions.example') && told.test(m.text))).toEqual(
        [],
      );
      // mailTo took the one mail: none more came.
      expect(timMails()).toEqual([]);

      // Muted, the conversation's reactions are not told either.
      await teammate.get('/c/onboarding');
      expect(
        (await teammate.post('/c/onboarding/mail', { csrf: teammate.hidden('csrf'), choice: 'mute' })).status,
      ).toBe(303);
      expect((await react(quinn, 'onboarding', fresh, 'add', 'surprised')).status).toBe(303);
      await new Promise((r) => setTimeout(r, 2_500));
      expect(timMails()).toEqual([]);
      await teammate.get('/c/onboarding');
      expect(
        (await teammate.post('/c/onboarding/mail', { csrf: teammate.hidden('csrf'), choice: 'unmute' })).status,
      ).toBe(303);
    } finally {
      await notify.stop();
    }
  });
});

// Last: the flood spends the address's budget every form of this file shares.
describe('a flood of reactions', () => {
  it('limits a flood per address (429 with Retry-After), as its own budget', async () => {
    const visitor = new Visitor(h, HOST);
    await visitor.get('/c/onboarding');
    const csrf = visitor.hidden('csrf');
    const statuses: number[] = [];
    await awayFromWindowEnd();
    for (let i = 0; i < REACTION_LIMIT + 5; i++) {
      const field = i % 2 === 0 ? 'add' : 'remove';
      statuses.push(
        (await visitor.post(`/c/onboarding/messages/${team}/reactions`, { csrf, [field]: 'laugh' })).status,
      );
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(visitor.last?.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
