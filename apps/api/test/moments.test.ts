import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, auth, type Harness, rows } from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { attr, elements, messageIdOf, Visitor } from './support/site.ts';

/*
 * Comments at a moment (issue 42): a reply in a recording's thread may name the moment of the
 * recording it speaks of. The thread's page marks it under the player and the reply says "At 0:02
 * of the recording"; create_message takes `at_seconds` and get_messages shows it; a moment outside
 * the recording, or without a recording's thread, is refused and changes nothing. Walked as the
 * team, a participant, a visitor and another account.
 */

const HOST = 'https://moments.example.com';
const OTHER_HOST = 'https://other-moments.example.com';
const TOKEN = 'moments-site-token-0123456789';
const OTHER_TOKEN = 'other-moments-token-0123456789';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;
const AUDIO = { name: 'a.ogg', type: 'audio/ogg', bytes: new Uint8Array(readFileSync(`${FIXTURES}audio-3s.ogg`)) };

let site: PeopleSite;
let h: Harness;
let owner: Visitor;
let pia: Visitor;
/** The team's 3-second recording, and a text message, of the public conversation. */
let recording: number;
let words: number;

const messagesCount = async () => (await rows<{ n: number }>(h, 'select count(*)::int as n from message'))[0]?.n;
const threadOf = (id: number) => `/c/talk/m/${id}`;

beforeAll(async () => {
  site = await openPeopleSite({
    accounts: [
      {
        key: 'moments',
        name: 'Moments Co',
        host: HOST,
        owner: 'olive@moments.example',
        users: [
          { email: 'olive@moments.example', name: 'Olive Owner' },
          { email: 'pia@else.example', name: 'Pia Participant' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          {
            title: 'Talk',
            slug: 'talk',
            allow_anonymous_messages: true,
            members: ['olive@moments.example', 'pia@else.example'],
          },
        ],
      },
      {
        key: 'other',
        name: 'Other',
        host: OTHER_HOST,
        owner: 'yara@other.example',
        users: [{ email: 'yara@other.example', name: 'Yara Other' }],
        tokens: [{ name: 'tests', token: OTHER_TOKEN }],
      },
    ],
  });
  h = site.h;
  owner = await signIn(site, HOST, 'olive@moments.example');
  pia = await signIn(site, HOST, 'pia@else.example');
  const posted = await owner.replyWithRecording('talk', { text: 'Have a look' }, AUDIO);
  expect(posted.status).toBe(303);
  recording = messageIdOf(posted.headers.get('location'));
  const text = await owner.reply('talk', { text: 'Plain words' });
  words = messageIdOf(text.headers.get('location'));
}, 60_000);
afterAll(async () => site?.close());

describe('comments at a moment', () => {
  it('offers "At" on a recording’s thread only, and a reply there shows its moment, marked under the player', async () => {
    const form = await pia.get(threadOf(recording));
    expect(form.html).toContain('id="reply-at"');
    expect(form.html).toContain('up to 0:03');
    expect((await pia.get(threadOf(words))).html).not.toContain('id="reply-at"');

    const before = await messagesCount();
    const posted = await pia.post('/c/talk', {
      csrf: pia.hidden('csrf'),
      submit: pia.hidden('submit'),
      parent: String(recording),
      text: 'This part is unclear',
      at: '0:02',
    });
    expect(posted.status).toBe(303);
    const id = messageIdOf(posted.headers.get('location'));
    expect(await messagesCount()).toBe((before ?? 0) + 1);

    for (const v of [owner, pia, new Visitor(h, HOST)]) {
      const thread = await v.get(threadOf(recording));
      expect(thread.status).toBe(200);
      // The reply says where, with a link that seeks the recording's player.
      const line = elements(thread.html).find(
        (e) => attr(e, 'data-seek') === '2' && attr(e, 'href')?.endsWith(`#message-${recording}`),
      );
      expect(line, 'the reply’s moment').toBeDefined();
      expect(thread.html).toContain('At <a');
      // Under the recording, a mark for it that leads to the reply.
      expect(thread.html).toMatch(
        new RegExp(`<ol class="moments"[^>]*data-length="3"[^>]*data-player="message-${recording}"`),
      );
      expect(thread.html).toContain(
        `<a href="#message-${id}" data-seek="2" data-player="message-${recording}" aria-label="Pia Participant at 0:02">0:02</a>`,
      );
    }
    // The conversation's page shows it in the thread's preview, marked too.
    expect((await owner.get('/c/talk')).html).toContain(`href="#message-${id}" data-seek="2"`);
  });

  it('refuses a moment past the recording, a malformed one, or one without a recording, and posts nothing', async () => {
    await pia.get(threadOf(recording));
    const before = await messagesCount();
    for (const [parent, at, says] of [
      [recording, '0:09', 'The recording is 0:03 long'],
      [recording, 'soon', 'Write the moment as minutes and seconds'],
      [recording, '1:75', 'Write the moment as minutes and seconds'],
      [words, '0:01', 'Only a reply to a recording can point at a moment'],
    ] as const) {
      await pia.get(threadOf(parent));
      const refused = await pia.post('/c/talk', {
        csrf: pia.hidden('csrf'),
        submit: pia.hidden('submit'),
        parent: String(parent),
        text: 'Where?',
        at,
      });
      expect([refused.status, refused.html.includes(says)], `${parent} at ${at}`).toEqual([422, true]);
      // What was typed stays in the form (a text's thread has no "At" to keep it in).
      if (parent === recording) expect(refused.html).toContain(`value="${at}"`);
    }
    expect(await messagesCount()).toBe(before);
  });

  it('takes at_seconds in create_message and shows it in get_messages; refuses it elsewhere', async () => {
    const post = (body: object, token = TOKEN) => apiCall(h, 'POST', '/messages/create_message', auth(token), body);
    const conversationId = (await rows<{ id: number }>(h, "select id from conversation where slug = 'talk'"))[0]?.id;
    const made = await post({
      conversation_id: conversationId,
      text: 'At the start',
      parent_message_id: recording,
      at_seconds: 0,
    });
    expect([made.status, made.body.at_seconds, made.body.parent_message_id]).toEqual([201, 0, recording]);
    const listed = await apiCall(h, 'GET', '/messages/get_messages?conversation_slug=talk', auth(TOKEN));
    const found = listed.body.messages.find((m: { id: number }) => m.id === made.body.id);
    expect(found.at_seconds).toBe(0);
    expect(listed.body.messages.find((m: { id: number }) => m.id === recording).at_seconds).toBeNull();
    // The spec'd operations keep their Message as it is.
    const got = await apiCall(h, 'GET', '/conversations/get_conversation?slug=talk', auth(TOKEN));
    expect(got.body.messages[0]).not.toHaveProperty('at_seconds');

    const before = await messagesCount();
    for (const [body, says] of [
      [{ parent_message_id: recording, at_seconds: 4 }, "past the recording's end (3 seconds)"],
      [{ parent_message_id: recording, at_seconds: 1.5 }, 'at_seconds'],
      [{ parent_message_id: recording, at_seconds: -1 }, 'at_seconds'],
      [{ parent_message_id: recording, at_seconds: 'soon' }, 'at_seconds'],
      [{ parent_message_id: words, at_seconds: 1 }, "only a reply in a recording's thread"],
      [{ at_seconds: 1 }, "only a reply in a recording's thread"],
    ] as const) {
      const refused = await post({ conversation_id: conversationId, text: 'Where?', ...body });
      expect([refused.status, refused.body.code], JSON.stringify(body)).toEqual([422, 'invalid_input']);
      expect(refused.body.error).toContain(says);
    }
    // Another account's token does not reach this conversation's thread: as a message that is not there.
    const elsewhere = await post(
      { conversation_id: conversationId, text: 'Where?', parent_message_id: recording, at_seconds: 1 },
      OTHER_TOKEN,
    );
    expect([elsewhere.status, elsewhere.body.error]).toEqual([
      422,
      `parent_message_id: no message ${recording} in conversation ${conversationId}`,
    ]);
    expect(await messagesCount()).toBe(before);
  });
});
