import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type NewPlay, PlayBuffer, ZMessagePlayedEvent } from '@convo/domain';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { nodeServer } from '../src/start/serve-node.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import { listen, openStream } from './support/events.ts';
import { apiCall, auth, BASE, call, type Harness, rows, until } from './support/harness.ts';
import { mailHeader } from './support/mailbox.ts';
import { mailTo, oneClick, openPeopleSite, type PeopleSite, signIn, unsubscribeLink } from './support/people.ts';
import { attr, elements, messageIdOf, present, Visitor } from './support/site.ts';
import { openReceiver } from './support/webhooks.ts';
import { awayFromWindowEnd } from './support/windows.ts';

/*
 * Played receipts (issue 42): the page's player reports a play (its beacon), once per viewer and
 * session, never by the message's own side; the author and the team see "Played by …" on the page
 * and live, the API shows `plays` and `played_by` and the log, a `message_played` webhook goes
 * out once. Walked as a visitor, a participant, the author, the team and another account, with
 * the beacon forged every way a hostile client would.
 */

const HOST = 'https://plays.example.com';
const OTHER_HOST = 'https://elsewhere.example.com';
const TOKEN = 'plays-site-token-0123456789';
const OTHER_TOKEN = 'elsewhere-token-0123456789';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;
const AUDIO = { name: 'a.ogg', type: 'audio/ogg', bytes: new Uint8Array(readFileSync(`${FIXTURES}audio-3s.ogg`)) };
/** The beacons one address may send a minute here. */
const PLAY_LIMIT = 40;

let site: PeopleSite;
let h: Harness;
let listener: { close(): Promise<void> };
let receiver: Awaited<ReturnType<typeof openReceiver>>;
let owner: Visitor;
let teammate: Visitor;
let pia: Visitor;
let quinn: Visitor;
let stranger: Visitor;
/** Recordings: the teammate's in the public conversation, Pia's there, the owner's in the private one, a note. */
let team: number;
let piaOwn: number;
let secret: number;
let note: number;

const sql = <T>(text: string, params: unknown[] = []) => rows<T>(h, text, params);

const cookie = (v: Visitor) => v.cookieHeader();
const playsOf = async (id: number) =>
  (await sql<{ n: number }>('select count(*)::int as n from message_play where message_id = ?', [id]))[0]?.n;

/** The ticket the page `slug` gives `v`'s player of `id`; undefined when its page gives none. */
async function ticketOf(v: Visitor, slug: string, id: number): Promise<string | undefined> {
  const page = await v.get(`/c/${slug}`);
  const figure = elements(page.html).find((e) => attr(e, 'data-play') === `/c/${slug}/messages/${id}/played`);
  return figure ? attr(figure, 'data-ticket') : undefined;
}

/**
 * The beacon as the page's script sends it (the page read first, then its figure's address and
 * ticket, or `o.ticket`), and the play it reported written (a server's beacons wait up to 100 ms
 * to be written together: the first test waits for that; the others have it written at once).
 */
async function play(v: Visitor, slug: string, id: number, o: { ticket?: string; origin?: string | null } = {}) {
  const res = await beacon(v, slug, id, o.ticket ?? (await ticketOf(v, slug, id)) ?? '', o.origin);
  await h.services.playBuffer.flush();
  return res;
}

/** The beacon as the page's script sends it: the ticket in its address, nothing in its body. */
const beaconPath = (slug: string, id: number, ticket: string) =>
  `/c/${slug}/messages/${id}/played?${new URLSearchParams({ ticket })}`;
const beacon = (v: Visitor, slug: string, id: number, ticket: string, origin?: string | null) =>
  v.post(beaconPath(slug, id, ticket), {}, { origin, body: '' });

/** A recording posted from the page; its message id. */
async function posted(v: Visitor, slug: string, fields: Record<string, string> = {}) {
  const res = await v.replyWithRecording(slug, { text: '', ...fields }, AUDIO);
  expect(res.status).toBe(303);
  return messageIdOf(res.headers.get('location'));
}

/** Messages the mail test posts: the webhook test counts the others'. */
const mailed: number[] = [];

/** The inbox's rows marked "Our recording not played yet", by slug. */
const unplayedIn = (inbox: string) =>
  inbox
    .split('<li class="')
    .filter((row) => row.includes('class="unplayed-mark"'))
    .map((row) => /href="\/c\/([^"]+)"/.exec(row)?.[1]);

/** The receipt the page shows on a message, or null. */
const receiptOn = (html: string, id: number) => {
  const p = elements(html).find((e) => attr(e, 'id') === `played-${id}`);
  return p ? (/>([^<]*)<\/p>/.exec(html.slice(html.indexOf(`id="played-${id}"`)))?.[1] ?? '') : null;
};

beforeAll(async () => {
  site = await openPeopleSite(
    {
      accounts: [
        {
          key: 'plays',
          name: 'Plays Co',
          host: HOST,
          owner: 'olive@plays.example',
          users: [
            { email: 'olive@plays.example', name: 'Olive Owner' },
            { email: 'tim@plays.example', name: 'Tim Teammate', team: 'member' },
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
              members: ['olive@plays.example', 'tim@plays.example', 'pia@else.example', 'quinn@else.example'],
            },
            {
              title: 'Private matters',
              slug: 'private',
              anyone_can_post: false,
              members: ['olive@plays.example', 'pia@else.example'],
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
      app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000, playsPerIpPerMinute: PLAY_LIMIT } } },
    },
  );
  h = site.h;
  listener = listen(h);
  receiver = await openReceiver(h, TOKEN, ['message_played']);

  owner = await signIn(site, HOST, 'olive@plays.example');
  teammate = await signIn(site, HOST, 'tim@plays.example');
  pia = await signIn(site, HOST, 'pia@else.example');
  quinn = await signIn(site, HOST, 'quinn@else.example');
  stranger = await signIn(site, OTHER_HOST, 'yara@elsewhere.example');

  team = await posted(teammate, 'onboarding');
  piaOwn = await posted(pia, 'onboarding');
  secret = await posted(owner, 'private');
  note = await posted(teammate, 'onboarding', { internal: 'true' });
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await listener?.close();
  h?.services.live.close();
  await site?.close();
});

describe('played receipts', () => {
  it("offers the beacon only where a play would be a receipt: to the other side, not the message's own", async () => {
    const beacons = async (v: Visitor) =>
      elements((await v.get('/c/onboarding')).html)
        .filter((e) => attr(e, 'data-play'))
        .map((e) => Number(/messages\/(\d+)\//.exec(attr(e, 'data-play') ?? '')?.[1]));
    // A participant reports the team's recording (not their own); the team reports Pia's (not the team's).
    expect(await beacons(pia)).toEqual([team]);
    expect(await beacons(teammate)).toEqual([piaOwn]);
    expect(await beacons(owner)).toEqual([piaOwn]);
    expect(await beacons(new Visitor(h, HOST))).toEqual([team, piaOwn]);
    // The threshold is the recording's: 75 % of a 3-second one.
    const figure = elements((await pia.get('/c/onboarding')).html).find((e) => attr(e, 'data-play'));
    expect(attr(present(figure), 'data-play-after')).toBe('2.25');
    // Its ticket names Pia (by her id) until a day from now; no CSRF token rides on it.
    const [viewer, expires] = (attr(present(figure), 'data-ticket') ?? '').split('.');
    expect(Number(viewer)).toBeGreaterThan(0);
    expect(Number(expires) - Date.now() / 1000).toBeGreaterThan(23 * 3600);
    expect(attr(present(figure), 'data-csrf')).toBeUndefined();
  });

  it('counts a participant’s play once per session; the author and the team see it on the page, live', async () => {
    const stream = await openStream(h, `${HOST}/c/onboarding/events`, cookie(owner));
    const piaStream = await openStream(h, `${HOST}/c/onboarding/events`, cookie(pia));
    expect(receiptOn((await owner.get('/c/onboarding')).html, team)).toBe('Not played yet');
    // The inbox marks each conversation whose latest recording by the team nobody has played.
    expect(unplayedIn((await owner.get('/')).html)).toEqual(['private', 'onboarding']);

    // As the page's script sends it: written within a moment, with the others of that moment.
    const ticket = await ticketOf(pia, 'onboarding', team);
    expect((await beacon(pia, 'onboarding', team, ticket ?? '')).status).toBe(204);
    await until(async () => (await playsOf(team)) === 1, 2_000);
    expect(unplayedIn((await owner.get('/')).html)).toEqual(['private']);
    expect(unplayedIn((await teammate.get('/')).html)).toEqual([]);
    expect(await playsOf(team)).toBe(1);
    expect((await stream.named('played')).data).toEqual({ message_id: team });
    // The same session again, and a second play: nothing more.
    expect((await play(pia, 'onboarding', team)).status).toBe(204);
    expect(await playsOf(team)).toBe(1);

    for (const v of [owner, teammate]) {
      expect(receiptOn((await v.get('/c/onboarding')).html, team)).toBe('Played by Pia Participant');
      const fragment = await v.get(`/c/onboarding/messages/${team}/played`);
      expect([fragment.status, fragment.html]).toEqual([
        200,
        `<p class="played" id="played-${team}">Played by Pia Participant</p>`,
      ]);
    }
    // Pia sees no receipt of another's message, and her stream is not told of its play.
    expect(receiptOn((await pia.get('/c/onboarding')).html, team)).toBeNull();
    expect((await pia.get(`/c/onboarding/messages/${team}/played`)).status).toBe(404);
    await expect(piaStream.next((e) => e.event === 'played', 300)).rejects.toThrow();
    stream.close();
    piaStream.close();
  });

  it("names signed-in viewers and counts visitors; a participant sees their own message's receipts", async () => {
    const piaStream = await openStream(h, `${HOST}/c/onboarding/events`, cookie(pia));
    expect((await play(quinn, 'onboarding', piaOwn)).status).toBe(204);
    expect((await piaStream.named('played')).data).toEqual({ message_id: piaOwn });
    const visitor = new Visitor(h, HOST);
    expect((await play(visitor, 'onboarding', piaOwn)).status).toBe(204);
    const another = new Visitor(h, HOST);
    expect((await play(another, 'onboarding', piaOwn)).status).toBe(204);
    expect(receiptOn((await pia.get('/c/onboarding')).html, piaOwn)).toBe('Played by Quinn Participant and 2 visitors');
    expect(receiptOn((await teammate.get('/c/onboarding')).html, piaOwn)).toBe(
      'Played by Quinn Participant and 2 visitors',
    );
    // Quinn and visitors see no receipts at all.
    expect(receiptOn((await quinn.get('/c/onboarding')).html, piaOwn)).toBeNull();
    expect(receiptOn((await visitor.get('/c/onboarding')).html, piaOwn)).toBeNull();
    expect((await visitor.get(`/c/onboarding/messages/${piaOwn}/played`)).status).toBe(404);
    piaStream.close();
  });

  it("adds nothing for the message's own side: its author, and the team on the team's message", async () => {
    const before = await playsOf(team);
    // Their pages give their players no ticket; another's ticket does not hold for them.
    const piaTicket = await ticketOf(pia, 'onboarding', team);
    for (const v of [teammate, owner]) {
      expect(await ticketOf(v, 'onboarding', team)).toBeUndefined();
      expect((await play(v, 'onboarding', team)).status).toBe(404);
      expect((await play(v, 'onboarding', team, { ticket: piaTicket })).status).toBe(404);
    }
    expect(await ticketOf(pia, 'onboarding', piaOwn)).toBeUndefined();
    expect((await play(pia, 'onboarding', piaOwn)).status).toBe(404);
    expect(await playsOf(team)).toBe(before);
    expect(await playsOf(piaOwn)).toBe(3);
  });

  it('refuses a forged or misdirected beacon, and changes nothing', async () => {
    const visitor = new Visitor(h, HOST);
    const count = async () => (await sql<{ n: number }>('select count(*)::int as n from message_play'))[0]?.n;
    const before = await count();
    // No ticket, a forged one, another's (Pia's, for this very message), from another site.
    expect((await play(visitor, 'onboarding', team, { ticket: '' })).status).toBe(404);
    expect((await play(visitor, 'onboarding', team, { ticket: `0.99999999999.${'A'.repeat(43)}` })).status).toBe(404);
    const piaTicket = (await ticketOf(pia, 'onboarding', team)) ?? '';
    expect(piaTicket).toMatch(/^\d+\.\d+\.[\w-]{43}$/);
    expect((await play(visitor, 'onboarding', team, { ticket: piaTicket })).status).toBe(404);
    // Its ticket names Pia: changed to name another, it holds for nobody.
    expect((await play(pia, 'onboarding', team, { ticket: piaTicket.replace(/^\d+/, '1') })).status).toBe(404);
    expect((await play(visitor, 'onboarding', team, { origin: 'https://evil.example' })).status).toBe(403);
    // A ticket for one message, sent for another (or under another slug).
    const visitorTicket = (await ticketOf(visitor, 'onboarding', team)) ?? '';
    expect((await play(visitor, 'onboarding', piaOwn, { ticket: visitorTicket })).status).toBe(404);
    expect((await play(visitor, 'private', team, { ticket: visitorTicket })).status).toBe(404);
    // A private conversation's recording, by someone not in it; an internal note, by a participant.
    expect((await play(visitor, 'private', secret)).status).toBe(404);
    expect((await play(quinn, 'onboarding', secret)).status).toBe(404);
    expect((await play(pia, 'onboarding', note)).status).toBe(404);
    // Another conversation's slug, another account's host, a message that is not there.
    expect((await play(pia, 'private', team)).status).toBe(404);
    const elsewhere = await stranger.get('/new');
    expect(elsewhere.status).toBe(200);
    expect((await beacon(stranger, 'onboarding', team, piaTicket)).status).toBe(404);
    expect((await play(pia, 'onboarding', 2_000_000_000)).status).toBe(404);
    expect((await play(pia, 'onboarding', Number('99999999999'))).status).toBe(404);
    // A text message has no recording to play.
    const text = await pia.reply('onboarding', { text: 'Just words' });
    expect((await play(quinn, 'onboarding', messageIdOf(text.headers.get('location')))).status).toBe(404);
    expect(await count()).toBe(before);
    // A member of the private conversation may: Pia plays the owner's recording there.
    expect((await play(pia, 'private', secret)).status).toBe(204);
    expect(await count()).toBe((before ?? 0) + 1);
  });

  it('tells the author in the mail digest, batched, and stops in one click, on the page or in the settings', async () => {
    const notify = startNotifyWorker(h.services.notifications, h.services.secrets, {
      batchSeconds: 1,
      logger: createLogger('silent'),
      intervalMs: 50,
    });
    const timMail = /played your/;
    const noPlayMail = async () => {
      await new Promise((r) => setTimeout(r, 2_500));
      expect(site.mailbox.mails.filter((m) => m.to.includes('tim@plays.example') && timMail.test(m.text))).toEqual([]);
    };
    try {
      // What the earlier tests left to tell goes out first (sent): this test reads the mail that follows.
      await until(async () => {
        const [left] = await sql<{ n: number }>(
          `select (select count(*) from notify_event) + (select count(*) from notification_digest)
             + (select count(*) from outgoing_mail where sent_at is null) as n`,
        );
        return Number(left?.n) === 0;
      }, 20_000);
      site.mailbox.mails.splice(0);
      const fresh = await posted(teammate, 'onboarding', { text: 'How to set up your first project' });
      mailed.push(fresh);

      // Two plays within the batch window: one mail, both named, the author alone told.
      expect((await play(pia, 'onboarding', fresh)).status).toBe(204);
      expect((await play(new Visitor(h, HOST), 'onboarding', fresh)).status).toBe(204);
      const mail = await mailTo(site.mailbox, 'tim@plays.example', timMail);
      // The subject, as the mail's first line says it (the header is MIME-encoded).
      expect(mail.text).toContain('\n2 plays of your messages in "Onboarding" on Plays Co:');
      expect(mail.text).toContain('Pia Participant played your audio recording');
      expect(mail.text).toContain('A visitor played your audio recording');
      expect(mail.text).toContain('> How to set up your first project');
      expect(mail.text).toContain(`${HOST}/c/onboarding#message-${fresh}`);
      await noPlayMail();
      expect(site.mailbox.mails.filter((m) => timMail.test(m.text))).toEqual([]);

      // The mail client's one click stops this conversation's play notices, and nothing else.
      expect(mailHeader(mail, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
      expect(unsubscribeLink(mail)).toMatch(/\.p\.[\w-]{43}$/);
      expect((await oneClick(h, unsubscribeLink(mail))).status).toBe(200);
      expect((await play(quinn, 'onboarding', fresh)).status).toBe(204);
      await noPlayMail();
      const page = await teammate.get('/c/onboarding');
      expect(page.html).toContain('You get no e-mail when someone plays your recordings here.');
      expect((await pia.reply('onboarding', { text: 'Thanks, watched it' })).status).toBe(303);
      const told = await mailTo(site.mailbox, 'tim@plays.example', /Thanks, watched it/);
      expect(told.text).toContain('A new message in "Onboarding" on Plays Co:');
      expect(told.text).not.toContain('played your');

      // Turned back on under the conversation: the next play is told, by name.
      expect(
        (await teammate.post('/c/onboarding/mail', { csrf: teammate.hidden('csrf'), choice: 'unmute_plays' })).status,
      ).toBe(303);
      expect((await play(new Visitor(h, HOST), 'onboarding', fresh)).status).toBe(204);
      expect((await mailTo(site.mailbox, 'tim@plays.example', timMail)).text).toContain(
        '\nA visitor played your message in "Onboarding" on Plays Co:',
      );

      // Off for all of the account's conversations in the settings, and on again.
      await teammate.get('/settings');
      expect(teammate.last?.html).toContain('Stop play notices');
      expect((await teammate.post('/settings', { csrf: teammate.hidden('csrf'), plays: 'off' })).status).toBe(303);
      expect((await teammate.get('/settings')).html).toContain('You are not told when someone plays');
      expect((await teammate.get('/c/onboarding')).html).toContain(
        'You get no e-mail when someone plays your recordings.',
      );
      expect((await play(new Visitor(h, HOST), 'onboarding', fresh)).status).toBe(204);
      await noPlayMail();
      for (const bad of [{ plays: 'maybe' }, {}] as Record<string, string>[]) {
        expect((await teammate.post('/settings', { csrf: teammate.hidden('csrf'), ...bad })).status).toBe(400);
      }
      expect((await teammate.post('/settings', { csrf: teammate.hidden('csrf'), plays: 'on' })).status).toBe(303);
      expect((await teammate.get('/settings')).html).toContain('Stop play notices');
      // A conversation muted whole says nothing of its play notices (they stop with it).
      const choose = async (choice: string) =>
        (await teammate.post('/c/onboarding/mail', { csrf: teammate.hidden('csrf'), choice })).status;
      await teammate.get('/c/onboarding');
      expect(await choose('mute')).toBe(303);
      const muted = (await teammate.get('/c/onboarding')).html;
      expect([muted.includes('E-mail me again'), muted.includes('play notices')]).toEqual([true, false]);
      expect(await choose('unmute')).toBe(303);
    } finally {
      await notify.stop();
    }
  });

  it('limits a flood of beacons per address (429 with Retry-After), as its own budget', async () => {
    const visitor = new Visitor(h, HOST);
    const ticket = await ticketOf(visitor, 'onboarding', team);
    const statuses: number[] = [];
    await awayFromWindowEnd();
    for (let i = 0; i < PLAY_LIMIT + 5; i++) {
      statuses.push((await beacon(visitor, 'onboarding', team, ticket ?? '')).status);
    }
    await h.services.playBuffer.flush();
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(visitor.last?.headers.get('retry-after')).toMatch(/^\d+$/);
    // Its plays were one, whatever the flood.
    expect(statuses.filter((s) => s === 204).length).toBeLessThanOrEqual(PLAY_LIMIT);
  });

  it('shows plays and played_by in get_messages, the log in get_message_views, to the account alone', async () => {
    const messages = await apiCall(h, 'GET', '/messages/get_messages?conversation_slug=onboarding', auth(TOKEN));
    expect(messages.status).toBe(200);
    const byId = new Map(messages.body.messages.map((m: { id: number }) => [m.id, m]));
    expect(byId.get(team)).toMatchObject({
      plays: 2,
      played_by: [{ id: expect.any(Number), email: 'pia@else.example', name: 'Pia Participant' }],
    });
    expect(byId.get(piaOwn)).toMatchObject({ plays: 3, played_by: [{ name: 'Quinn Participant' }] });
    const views = await apiCall(h, 'GET', `/messages/get_message_views?message_id=${piaOwn}`, auth(TOKEN));
    expect(views.status).toBe(200);
    expect(views.body).toEqual({
      message_id: piaOwn,
      plays: 3,
      views: [
        {
          viewer: { anonymous: false, id: expect.any(Number), name: 'Quinn Participant', email: 'quinn@else.example' },
          played_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
        { viewer: { anonymous: true }, played_at: expect.any(String) },
        { viewer: { anonymous: true }, played_at: expect.any(String) },
      ],
    });
    const trpc = await call(
      h,
      new Request(
        `${BASE}/trpc/messages.getMessageViews?input=${encodeURIComponent(JSON.stringify({ message_id: piaOwn }))}`,
        { headers: auth(TOKEN) },
      ),
    );
    expect(trpc.body).toEqual({ result: { data: views.body } });
    // Another account's token, a message nobody has, bad input.
    const other = await apiCall(h, 'GET', `/messages/get_message_views?message_id=${piaOwn}`, auth(OTHER_TOKEN));
    expect([other.status, other.body.code]).toEqual([404, 'message_not_found']);
    const none = await apiCall(h, 'GET', '/messages/get_message_views?message_id=2000000000', auth(TOKEN));
    expect([none.status, none.body.code]).toEqual([404, 'message_not_found']);
    for (const bad of ['', '?message_id=abc', '?message_id=0', '?message_id=1.5']) {
      const refused = await apiCall(h, 'GET', `/messages/get_message_views${bad}`, auth(TOKEN));
      expect([refused.status, refused.body.code]).toEqual([422, 'invalid_input']);
    }
    expect((await apiCall(h, 'GET', `/messages/get_message_views?message_id=${piaOwn}`, {})).status).toBe(401);
  });

  it('sends message_played once per counted play, signed, with the viewer as the API shows a person', async () => {
    // A receiver de-duplicates by `webhook-id` (a delivery timed out under load is sent again).
    const unique = () =>
      [...new Map(receiver.received.map((r) => [String(r.headers['webhook-id']), r])).values()].filter(
        (r) => !mailed.some((id) => r.body.includes(`"message_id":${id},`)),
      );
    await until(() => unique().length >= 6);
    const bodies = unique().map((r) =>
      new Webhook(receiver.secret).verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      }),
    ) as { type: string; data: { message_id: number; conversation_id: number; viewer: unknown; played_at: string } }[];
    // Each body is what the OpenAPI document's webhooks section says it is.
    for (const b of bodies) expect(ZMessagePlayedEvent.parse(b)).toEqual(b);
    const ofTeam = bodies.filter((b) => b.data.message_id === team);
    // Pia once (her second beacon and the flood's repeats add nothing), and the flood's visitor once.
    expect(ofTeam.map((b) => b.data.viewer)).toEqual([
      { anonymous: false, id: expect.any(Number), name: 'Pia Participant', email: 'pia@else.example' },
      { anonymous: true },
    ]);
    expect(bodies.filter((b) => b.data.message_id === piaOwn)).toHaveLength(3);
    expect(bodies.filter((b) => b.data.message_id === secret)).toHaveLength(1);
    expect(bodies.some((b) => b.data.message_id === note)).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(unique()).toHaveLength(6);
  });

  it("is answered the same over Node's own HTTP, where the server takes a beacon before the web stack", async () => {
    const server = nodeServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    await awayFromWindowEnd();
    const { port } = server.address() as AddressInfo;
    /** A beacon sent over a connection as a browser sends it: no body, unless `body`. */
    const send = (path: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        });
        req.on('error', reject).end(body);
      });
    try {
      const visitor = new Visitor(h, HOST);
      const ticket = (await ticketOf(visitor, 'onboarding', piaOwn)) ?? '';
      const from = { host: new URL(HOST).host, origin: HOST, 'sec-fetch-site': 'same-origin', ...cookie(visitor) };
      const before = (await playsOf(piaOwn)) ?? 0;
      const secretPlays = await playsOf(secret);
      const kept = await send(beaconPath('onboarding', piaOwn, ticket), { ...from, 'x-request-id': 'beacon-1' });
      expect([kept.status, kept.headers['cache-control'], kept.headers['x-request-id'], kept.text]).toEqual([
        204,
        'no-store',
        'beacon-1',
        '',
      ]);
      // Sent again: answered alike, counted once.
      expect((await send(beaconPath('onboarding', piaOwn, ticket), from)).status).toBe(204);
      await h.services.playBuffer.flush();
      expect(await playsOf(piaOwn)).toBe(before + 1);

      // What the server does not keep, the app answers: with the page that says why.
      const refusedWith = async (path: string, headers: Record<string, string>, body?: string) => {
        const res = await send(path, headers, body);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        return res.status;
      };
      // Pia's ticket for the private recording is hers: this visitor's cookie does not hold it.
      const piaSecret = (await ticketOf(pia, 'private', secret)) ?? '';
      expect(piaSecret).not.toBe('');
      expect(await refusedWith(beaconPath('onboarding', piaOwn, `0.99999999999.${'A'.repeat(43)}`), from)).toBe(404);
      expect(await refusedWith(beaconPath('private', secret, piaSecret), from)).toBe(404);
      const crossSite = { ...from, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
      expect(await refusedWith(beaconPath('onboarding', piaOwn, ticket), crossSite)).toBe(403);
      expect(
        await refusedWith(beaconPath('onboarding', piaOwn, ticket), { ...from, origin: '', 'sec-fetch-site': '' }),
      ).toBe(403);
      // The ticket rides in the address: one in a form's body is not read.
      const form = { ...from, 'content-type': 'application/x-www-form-urlencoded' };
      expect(await refusedWith(`/c/onboarding/messages/${piaOwn}/played`, form, `ticket=${ticket}`)).toBe(404);
      // Another account's host knows no such conversation; a flood of them there is limited at
      // PLAY_LIMIT, each refused beacon counted once (the server hands it on, the app counts it).
      const elsewhere = { ...from, host: new URL(OTHER_HOST).host };
      const statuses: number[] = [];
      for (let i = 0; i <= PLAY_LIMIT; i++) {
        statuses.push((await send(beaconPath('onboarding', piaOwn, ticket), elsewhere)).status);
      }
      expect(statuses.filter((s) => s === 404)).toHaveLength(PLAY_LIMIT);
      expect(statuses.at(-1)).toBe(429);
      await h.services.playBuffer.flush();
      expect(await playsOf(piaOwn)).toBe(before + 1);
      expect(await playsOf(secret)).toBe(secretPlays);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('writes a play reported again after it was kept no second time, while the process remembers it', async () => {
    // The server's own store, its statements counted: the last `remembered` plays written are known.
    const written: number[] = [];
    const store = {
      record(plays: readonly NewPlay[]) {
        written.push(plays.length);
        return h.services.plays.record(plays);
      },
    };
    const buffer = new PlayBuffer(store, { waitMs: 10_000, maxPlays: 100, remembered: 2, onError: () => {} });
    // A recording of its own, whose plays no other test counts.
    const id = await posted(teammate, 'onboarding');
    const [row] = await sql<{ account_id: number }>('select account_id from message where id = ?', [id]);
    const session = (n: number) => hash('sha256', `remembered-${n}`, 'hex');
    const playOf = (n: number) => ({
      accountId: present(row).account_id,
      messageId: id,
      viewerId: null,
      sessionKey: session(n),
    });
    for (const n of [1, 2, 1]) buffer.add(playOf(n));
    await buffer.flush();
    expect([written, await playsOf(id)]).toEqual([[2], 2]);
    // Both again: nothing to write. A third session's play pushes the first out of what is remembered.
    for (const n of [1, 2]) buffer.add(playOf(n));
    await buffer.flush();
    buffer.add(playOf(3));
    await buffer.flush();
    for (const n of [2, 3, 1]) buffer.add(playOf(n));
    await buffer.flush();
    // The first came again after it was forgotten: written again, and kept once still.
    expect([written, await playsOf(id)]).toEqual([[2, 1, 1], 3]);
  });
});
