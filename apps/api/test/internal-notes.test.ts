import { readFileSync } from 'node:fs';
import { exportAccounts } from '@convo/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { type EventStream, listen, openStream } from './support/events.ts';
import { apiCall, auth, type Harness, rows } from './support/harness.ts';
import { mailTo, openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { messageIdOf, Visitor } from './support/site.ts';

/*
 * Internal notes (issue 41): a message only the account's team sees. Posted from the reply form's
 * box and through create_message's `internal`, it is walked on every surface as the owner, an
 * admin, a team member, a participant, a visitor, an embed and another account: the page, its
 * message and media addresses, the embeds, the live streams, mail, the spec'd operations and
 * get_messages, the sitemap, the participant's list, the export. Only the team finds a note.
 */

const HOST = 'https://notes.example.com';
const OTHER_HOST = 'https://elsewhere.example.com';
const TOKEN = 'notes-site-token-0123456789';
const OTHER_TOKEN = 'elsewhere-token-0123456789';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;
const SECRET = /SECRET-NOTE/;

let site: PeopleSite;
let h: Harness;
let notify: QueueWorker;
let listener: { close(): Promise<void> };
let owner: Visitor;
let admin: Visitor;
let member: Visitor;
let participant: Visitor;
let stranger: Visitor;
/** The notes: one typed on the page, one with a recording, one through the API. */
let typed: number;
let recorded: number;
let posted: number;

const sql = <T>(text: string, params: unknown[] = []) => rows<T>(h, text, params);

const cookie = (v: Visitor) => v.cookieHeader();

beforeAll(async () => {
  site = await openPeopleSite({
    accounts: [
      {
        key: 'notes',
        name: 'Notes Co',
        host: HOST,
        owner: 'olive@notes.example',
        users: [
          { email: 'olive@notes.example', name: 'Olive Owner' },
          { email: 'ada@notes.example', name: 'Ada Admin', team: 'admin' },
          { email: 'tim@notes.example', name: 'Tim Teammate', team: 'member' },
          { email: 'pia@else.example', name: 'Pia Participant' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          {
            title: 'Where is my order',
            slug: 'order',
            allow_anonymous_messages: true,
            members: ['olive@notes.example', 'pia@else.example'],
            messages: [{ author: 'pia@else.example', text: 'Where is my order?' }],
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
  });
  h = site.h;
  listener = listen(h);
  notify = startNotifyWorker(h.services.notifications, h.services.secrets, {
    batchSeconds: 1,
    logger: createLogger('silent'),
    intervalMs: 100,
  });
  owner = await signIn(site, HOST, 'olive@notes.example');
  admin = await signIn(site, HOST, 'ada@notes.example');
  member = await signIn(site, HOST, 'tim@notes.example');
  participant = await signIn(site, HOST, 'pia@else.example');
  stranger = await signIn(site, OTHER_HOST, 'yara@elsewhere.example');

  const note = await member.reply('order', { text: 'SECRET-NOTE typed: they paid twice', internal: 'true' });
  expect(note.status).toBe(303);
  typed = messageIdOf(note.headers.get('location'));
  const withRecording = await member.replyWithRecording(
    'order',
    { text: 'SECRET-NOTE recorded', internal: 'true' },
    { name: 'a.ogg', type: 'audio/ogg', bytes: new Uint8Array(readFileSync(`${FIXTURES}audio-3s.ogg`)) },
  );
  expect(withRecording.status).toBe(303);
  recorded = messageIdOf(withRecording.headers.get('location'));
  const [{ id } = { id: 0 }] = await sql<{ id: number }>("select id from conversation where slug = 'order'");
  const api = await apiCall(h, 'POST', '/messages/create_message', auth(TOKEN), {
    conversation_id: id,
    text: 'SECRET-NOTE from the API',
    internal: true,
    user_email: 'ada@notes.example',
  });
  expect([api.status, api.body.internal]).toEqual([201, true]);
  posted = api.body.id;
  // And a message everyone sees, after them.
  expect((await participant.reply('order', { text: 'Any news?' })).status).toBe(303);
}, 60_000);
afterAll(async () => {
  await notify?.stop();
  await listener?.close();
  h?.services.live.close();
  await site?.close();
});

describe('an internal note', () => {
  it('is on the team’s page, marked plainly, for the owner, an admin and a team member', async () => {
    for (const who of [owner, admin, member]) {
      const page = await who.get('/c/order');
      expect(page.status).toBe(200);
      expect(page.html).toContain('SECRET-NOTE typed: they paid twice');
      expect(page.html).toContain(`<article class="message internal" id="message-${typed}">`);
      expect(page.html).toContain('Internal note: only the team sees it');
      expect((await who.get(`/c/order/messages/${posted}`)).status).toBe(200);
      expect((await who.get(`/media/notes/${recorded}?c=order`)).status).toBe(200);
    }
  });

  it('is nowhere a participant, a visitor, an embed or another account looks', async () => {
    const visitor = new Visitor(h, HOST);
    const otherHost = new Visitor(h, OTHER_HOST);
    for (const [who, name] of [
      [participant, 'participant'],
      [visitor, 'visitor'],
      [stranger, 'another account'],
    ] as const) {
      for (const path of ['/c/order', '/c/order?page=1', '/', '/sitemap.xml', '/embeds/conversations/notes/order']) {
        const page = await who.get(path);
        expect(page.html, `${name} ${path}`).not.toMatch(SECRET);
      }
      for (const id of [typed, recorded, posted]) {
        for (const path of [
          `/c/order/messages/${id}`,
          `/embeds/conversations/notes/order/messages/${id}`,
          `/embeds/messages/notes/${id}?c=order`,
          `/embeds/messages/notes/${id}&show_author=true`,
          `/media/notes/${id}?c=order`,
          `/media/notes/${id}/poster?c=order`,
        ]) {
          expect((await who.get(path)).status, `${name} ${path}`).toBe(404);
        }
      }
    }
    // The page counts what it shows: the participant sees two messages, the team five.
    expect((await participant.get('/c/order')).html).not.toContain('internal');
    expect((await otherHost.get('/c/order')).status).toBe(404);
    // The team's own embed is the world's: no note there either.
    for (const who of [owner, member]) {
      expect((await who.get('/embeds/conversations/notes/order')).html).not.toMatch(SECRET);
      expect((await who.get(`/embeds/messages/notes/${typed}?c=order`)).status).toBe(404);
    }
  });

  it('is in get_messages (internal: true) and never in the spec’d operations', async () => {
    const spec = await apiCall(h, 'GET', '/conversations/get_conversation?slug=order', auth(TOKEN));
    expect(JSON.stringify(spec.body)).not.toMatch(SECRET);
    expect(spec.body.messages.map((m: { text: string }) => m.text)).toEqual(['Where is my order?', 'Any news?']);
    const list = await apiCall(h, 'GET', '/conversations/get_conversations', auth(TOKEN));
    expect(JSON.stringify(list.body)).not.toMatch(SECRET);
    const messages = (await apiCall(h, 'GET', '/messages/get_messages?conversation_slug=order', auth(TOKEN))).body
      .messages as { id: number; internal: boolean }[];
    expect(messages.filter((m) => m.internal).map((m) => m.id)).toEqual([posted, recorded, typed]);
    expect((await apiCall(h, 'GET', '/messages/get_messages', auth(OTHER_TOKEN))).status).toBe(404);
  });

  it('refuses a note from anyone off the team, posting nothing', async () => {
    const [{ n: before } = { n: 0 }] = await sql<{ n: number }>('select count(*)::int as n from message');
    const forged = await participant.reply('order', { text: 'I am the team now', internal: 'true' });
    expect(forged.status).toBe(422);
    expect(forged.html).toContain('Only the account’s team writes internal notes.');
    const anonymous = await new Visitor(h, HOST).reply('order', { text: 'Me too', internal: 'true' });
    expect(anonymous.status).toBe(422);
    const [{ n: after } = { n: 0 }] = await sql<{ n: number }>('select count(*)::int as n from message');
    expect(after).toBe(before);
  });

  it('reaches the team’s live streams and no one else’s', async () => {
    // Every stream from the same place in the feed: just after the last event written so far.
    const [last] = await sql<{ position: string }>(
      `select xid::text || '.' || id as position from live_event order by xid desc, id desc limit 1`,
    );
    const follow = (v: Visitor | null, path: string) =>
      openStream(h, `${HOST}${path}`, { ...(v ? cookie(v) : {}), 'last-event-id': last?.position ?? '' });
    const streams = {
      team: await follow(member, '/c/order/events'),
      inbox: await follow(owner, '/events'),
      participant: await follow(participant, '/c/order/events'),
      visitor: await follow(null, '/c/order/events'),
      embed: await follow(member, '/embeds/conversations/notes/order/events'),
    };
    try {
      const note = await admin.reply('order', { text: 'SECRET-NOTE live', internal: 'true' });
      const noteId = messageIdOf(note.headers.get('location'));
      const reply = await owner.reply('order', { text: 'On its way!' });
      const replyId = messageIdOf(reply.headers.get('location'));
      const heard = async (s: EventStream) => {
        const ids: unknown[] = [];
        while (ids.at(-1) !== replyId) ids.push((await s.named('posted')).data.message_id);
        return ids;
      };
      expect(await heard(streams.team)).toEqual([noteId, replyId]);
      expect((await streams.inbox.named('conversation')).data).toHaveProperty('conversation_id');
      for (const s of [streams.participant, streams.visitor, streams.embed]) {
        // Only what everyone sees: the note is not told to them.
        expect(await heard(s)).toEqual([replyId]);
      }
    } finally {
      for (const s of Object.values(streams)) s.close();
    }
  });

  it('is mailed to the team, never to a participant', async () => {
    const forPia = await mailTo(site.mailbox, 'pia@else.example', /On its way!/);
    expect(forPia.text).not.toMatch(SECRET);
    const forOlive = await mailTo(site.mailbox, 'olive@notes.example', /SECRET-NOTE/);
    expect(forOlive.text).toContain('Tim Teammate (Notes Co team), internal note (only the team sees it)');
    // Nobody off the team got a mail with a note in it.
    expect(site.mailbox.mails.filter((m) => m.to.includes('pia@else.example') && SECRET.test(m.text))).toEqual([]);
  });

  it('moves neither the conversation’s state nor the participant’s list, and goes out in the export', async () => {
    const read = () =>
      sql<{ id: number; state: string; activity: string; archived: boolean }>(
        `select id, state, last_activity_at::text as activity, archived_at is not null as archived
         from conversation where slug = 'order'`,
      );
    // Waiting on the other side after the team's reply; archived by the team.
    await sql("update conversation set archived_at = now() where slug = 'order'");
    const [before] = await read();
    expect(before?.state).toBe('waiting');
    const later = await apiCall(h, 'POST', '/messages/create_message', auth(TOKEN), {
      conversation_id: before?.id,
      text: 'SECRET-NOTE later',
      internal: true,
    });
    expect(later.status).toBe(201);
    expect(await read()).toEqual([before]);
    const mine = await participant.get('/');
    expect(mine.html).not.toMatch(SECRET);
    let text = '';
    for await (const piece of exportAccounts(h.db.orm.em.fork(), ['notes'])) text += piece;
    const messages = JSON.parse(text).accounts[0].conversations[0].messages as { text: string; internal?: boolean }[];
    expect(messages.filter((m) => m.internal).map((m) => m.text)).toEqual([
      'SECRET-NOTE typed: they paid twice',
      'SECRET-NOTE recorded',
      'SECRET-NOTE from the API',
      'SECRET-NOTE live',
      'SECRET-NOTE later',
    ]);
    expect(messages.find((m) => m.text === 'Any news?')).not.toHaveProperty('internal');
  });
});
