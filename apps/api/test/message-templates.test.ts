import { readFileSync } from 'node:fs';
import { newMediaKey } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiCall,
  apiMultipart,
  BASE,
  call,
  type Harness,
  keptRecordings,
  makeAccount,
  mediaFixture,
  openHarness,
  type TestAccount,
} from './support/harness.ts';

/*
 * The team's message templates over the API (`/api/v1/message_templates`, `messageTemplates.*`)
 * and create_message's `message_template_id`: a template's text replaces the text given, one of a
 * recording alone carries the text given under it, the message is the template's creator's and
 * keeps the template's id and name when the template changes or goes; another account's template
 * is as missing as one that never was, and a refusal changes nothing.
 */

const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;

let h: Harness;
let a: TestAccount;
let b: TestAccount;
let conversationId: number;
let theirConversationId: number;
/** A message of alpha's with a recording this server keeps (and one of bravo's). */
let recorded: number;
let theirRecorded: number;

const auth = (t: TestAccount) => ({ authorization: `Bearer ${t.token}` });
const templates = (t: TestAccount, method: string, path = '', body?: unknown) =>
  apiCall(h, method, `/message_templates${path}`, auth(t), body);
const post = (t: TestAccount, body: unknown) => apiCall(h, 'POST', '/messages/create_message', auth(t), body);
const sql = async <T>(text: string, params: unknown[] = []) =>
  (await h.db.orm.em.fork().getConnection().execute(text, params)) as T[];
const rows = async () =>
  sql<{ account_id: number; name: string; text: string }>(
    'select account_id, name, text, updated_at from message_template order by id',
  );

/** A message with a recording kept in the media store, as a reply with one is written. */
async function recordingIn(t: TestAccount, conversation: number): Promise<number> {
  const key = newMediaKey(t.id);
  const bytes = new Uint8Array(readFileSync(`${FIXTURES}audio-3s.ogg`));
  await h.services.media.store.put(key, [bytes], bytes.length);
  const [row] = await sql<{ id: number }>(
    `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, author_id, anonymous,
       text, media_key, media_content_type, media_bytes)
     values (?, ?, 'audio', 3, ?, false, 'With my voice', ?, 'audio/ogg', ?) returning id`,
    [t.id, conversation, t.ownerId, key, bytes.length],
  );
  return row?.id ?? 0;
}

beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'alpha');
  b = await makeAccount(h, 'bravo');
  const made = await apiCall(h, 'POST', '/conversations/create_conversation', auth(a), { title: 'Refunds' });
  conversationId = made.body.id;
  const theirs = await apiCall(h, 'POST', '/conversations/create_conversation', auth(b), { title: 'Theirs' });
  theirConversationId = theirs.body.id;
  recorded = await recordingIn(a, conversationId);
  theirRecorded = await recordingIn(b, theirConversationId);
});
afterAll(async () => h?.close());

describe('the template library', () => {
  it('adds, lists by name, changes and deletes templates', async () => {
    const made = await templates(a, 'POST', '', {
      name: 'Refund on its way',
      text: 'Your refund is <b>on its way</b>. <script>x()</script>',
      recording_message_id: recorded,
    });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.any(Number),
      name: 'Refund on its way',
      text: 'Your refund is <b>on its way</b>.',
      recording: { message_type: 'audio', recorded_duration_seconds: 3 },
      creator: { id: a.ownerId, name: 'Owner alpha', email: 'owner@alpha.example.com' },
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const other = await templates(a, 'POST', '', { name: 'a welcome', text: 'Hello and welcome!' });
    expect(other.status).toBe(201);
    const listed = await templates(a, 'GET');
    expect(listed.status).toBe(200);
    expect(listed.body.message_templates.map((t: { name: string }) => t.name)).toEqual([
      'a welcome',
      'Refund on its way',
    ]);
    // The other account sees its own library only.
    expect((await templates(b, 'GET')).body).toEqual({ message_templates: [] });

    const changed = await templates(a, 'PATCH', `/${other.body.id}`, {
      name: 'Welcome',
      recording_message_id: recorded,
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      name: 'Welcome',
      text: 'Hello and welcome!',
      recording: { message_type: 'audio' },
    });
    const dropped = await templates(a, 'PATCH', `/${other.body.id}`, { recording_message_id: null });
    expect(dropped.body.recording).toBeNull();

    const gone = await templates(a, 'DELETE', `/${other.body.id}`);
    expect([gone.status, gone.body]).toEqual([200, { id: other.body.id, deleted: true }]);
    expect((await templates(a, 'DELETE', `/${other.body.id}`)).status).toBe(404);
    expect((await templates(a, 'GET')).body.message_templates).toHaveLength(1);
  });

  it('refuses what breaks a rule, with the reason, and changes nothing', async () => {
    const [kept] = (await templates(a, 'GET')).body.message_templates;
    const before = await rows();
    const refusals: [string, string, unknown, number, string][] = [
      ['POST', '', { text: 'no name' }, 422, 'invalid_input'],
      ['POST', '', { name: 'Empty' }, 422, 'invalid_input'],
      ['POST', '', { name: 'Blank', text: '   ' }, 422, 'invalid_input'],
      ['POST', '', { name: 'refund ON its way', text: 'same name' }, 409, 'message_template_name_taken'],
      ['POST', '', { name: 'Theirs', recording_message_id: theirRecorded }, 422, 'invalid_input'],
      ['POST', '', { name: 'Text only', recording_message_id: 2_000_000_000 }, 422, 'invalid_input'],
      ['POST', '', { name: 'Nul\u0000', text: 'x' }, 422, 'invalid_input'],
      ['POST', '', { name: 'x'.repeat(256), text: 'x' }, 422, 'invalid_input'],
      ['POST', '', { name: 'Huge', text: 'x'.repeat(10_001) }, 422, 'invalid_input'],
      ['POST', '', { name: 'Only markup', text: '<script>alert(1)</script>' }, 422, 'invalid_input'],
      ['POST', '', { name: 7, text: 'x' }, 422, 'invalid_input'],
      ['PATCH', `/${kept.id}`, { name: '' }, 422, 'invalid_input'],
      ['PATCH', '/999999', { name: 'Nothing' }, 404, 'message_template_not_found'],
      ['PATCH', '/abc', { name: 'Nothing' }, 422, 'invalid_input'],
      ['DELETE', '/0', undefined, 422, 'invalid_input'],
    ];
    for (const [method, path, body, status, code] of refusals) {
      const r = await templates(a, method, path, body);
      expect([r.status, r.body.code], `${method} ${path} ${JSON.stringify(body)?.slice(0, 60)}`).toEqual([
        status,
        code,
      ]);
      expect(typeof r.body.error).toBe('string');
    }
    // Another account's template is as missing as one that never was.
    for (const [method, body] of [
      ['PATCH', { name: 'Mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const theirs = await templates(b, method, `/${kept.id}`, body);
      const none = await templates(b, method, '/999999', body);
      expect([theirs.status, theirs.body]).toEqual([none.status, none.body]);
    }
    expect(await rows()).toEqual(before);
  });

  it('is a tRPC procedure too', async () => {
    const r = await call(h, new Request(`${BASE}/trpc/messageTemplates.listMessageTemplates`, { headers: auth(a) }));
    expect(r.status).toBe(200);
    expect(r.body.result.data.message_templates.length).toBeGreaterThan(0);
  });
});

describe('create_message with a template', () => {
  it('takes the template’s text and recording, as its creator, and keeps its name when it changes or goes', async () => {
    const made = await templates(a, 'POST', '', { name: 'Thanks', text: '<p>Thanks, <i>truly</i>!</p>' });
    const posted = await post(a, {
      conversation_id: conversationId,
      message_template_id: made.body.id,
      text: 'ignored',
    });
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({
      text: '<p>Thanks, <i>truly</i>!</p>',
      author: { anonymous: false, email: 'owner@alpha.example.com' },
      message_template: { id: made.body.id, name: 'Thanks' },
      message_type: 'text',
    });
    // Named explicitly, the author is whoever the request names.
    await templates(a, 'PATCH', `/${made.body.id}`, { name: 'Thanks again' });
    const listed = await apiCall(h, 'GET', '/messages/get_messages', auth(a));
    expect(listed.body.messages[0].message_template).toEqual({ id: made.body.id, name: 'Thanks' });
    await templates(a, 'DELETE', `/${made.body.id}`);
    const after = await apiCall(h, 'GET', '/messages/get_messages', auth(a));
    expect(after.body.messages[0]).toMatchObject({ id: posted.body.id, text: '<p>Thanks, <i>truly</i>!</p>' });
    expect(after.body.messages[0].message_template).toEqual({ id: made.body.id, name: 'Thanks' });
  });

  it('puts the text given under the recording of a template without text; the recording outlives its message', async () => {
    // The recording comes from a conversation that is then deleted, recordings and all.
    const source = await apiCall(h, 'POST', '/conversations/create_conversation', auth(a), { title: 'Source' });
    const sourceMessage = await recordingIn(a, source.body.id);
    const voice = await templates(a, 'POST', '', { name: 'Voice hello', recording_message_id: sourceMessage });
    expect(voice.status).toBe(201);
    const [{ media_key: key } = { media_key: '' }] = await sql<{ media_key: string }>(
      'select media_key from message where id = ?',
      [sourceMessage],
    );
    const deleted = await apiCall(h, 'POST', '/conversations/delete_conversation', auth(a), {
      conversation_id: source.body.id,
    });
    expect(deleted.status).toBe(200);
    expect(await h.services.media.store.size(key)).toBeGreaterThan(0);

    const posted = await post(a, {
      conversation_id: conversationId,
      message_template_id: voice.body.id,
      text: 'Hi Pat, listen to this',
    });
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({
      message_type: 'audio',
      recorded_duration_seconds: 3,
      text: 'Hi Pat, listen to this',
      download_media_url: expect.stringContaining('/media/alpha/'),
    });
    const media = await call(h, new Request(posted.body.download_media_url));
    expect(media.status).toBe(200);
    const bare = await post(a, { conversation_id: conversationId, message_template_id: voice.body.id });
    expect([bare.status, bare.body.text, bare.body.message_type]).toEqual([201, '', 'audio']);
  });

  it('keeps a recording sent with the template (multipart), and refuses one it cannot take, keeping nothing', async () => {
    const video = mediaFixture('video-3s.webm', 'video/webm');
    const sent = await apiMultipart(
      h,
      'POST',
      '/message_templates',
      auth(a),
      { name: 'Screen tour', recording_kind: 'screen' },
      video,
    );
    expect(sent.status).toBe(201);
    expect(sent.body.recording).toEqual({ message_type: 'screen', recorded_duration_seconds: 3 });
    const posted = await post(a, { conversation_id: conversationId, message_template_id: sent.body.id, text: 'Here' });
    expect(posted.body).toMatchObject({ message_type: 'screen', text: 'Here' });
    const played = await call(h, new Request(posted.body.download_media_url));
    expect(played.headers.get('content-length')).toBe(String(video.bytes.length));
    // A change may send another; the template then carries that one.
    const audio = mediaFixture('audio-3s.m4a', 'audio/mp4');
    const changed = await apiMultipart(h, 'PATCH', `/message_templates/${sent.body.id}`, auth(a), {}, audio);
    expect([changed.status, changed.body.recording?.message_type]).toEqual([200, 'audio']);

    const before = { rows: JSON.stringify(await rows()), kept: await keptRecordings(h) };
    const junk = { name: 'junk.webm', type: 'video/webm', bytes: new TextEncoder().encode('no video at all') };
    for (const [method, path, fields, file, status] of [
      ['POST', '/message_templates', { name: 'Junk' }, junk, 422],
      ['POST', '/message_templates', { name: 'Both', recording_message_id: String(recorded) }, video, 422],
      ['POST', '/message_templates', { name: 'Screen tour' }, video, 409],
      ['POST', '/message_templates', { recording_kind: 'screen' }, video, 422],
      ['PATCH', `/message_templates/${sent.body.id}`, {}, junk, 422],
      ['PATCH', '/message_templates/2000000000', {}, video, 404],
    ] as const) {
      const refused = await apiMultipart(h, method, path, auth(a), fields, file);
      expect([refused.status, typeof refused.body.error], `${method} ${path} ${JSON.stringify(fields)}`).toEqual([
        status,
        'string',
      ]);
    }
    // Another account's template: as missing, and the recording is not kept.
    const theirs = await apiMultipart(h, 'PATCH', `/message_templates/${sent.body.id}`, auth(b), {}, video);
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(await rows())).toBe(before.rows);
    expect(await keptRecordings(h)).toBe(before.kept);
  });

  it('refuses another account’s template as a missing one, and posts nothing', async () => {
    const theirs = await templates(b, 'POST', '', { name: 'Bravo says', text: 'Bravo words' });
    const [{ n: before } = { n: 0 }] = await sql<{ n: number }>('select count(*)::int as n from message');
    const stolen = await post(a, { conversation_id: conversationId, message_template_id: theirs.body.id });
    const none = await post(a, { conversation_id: conversationId, message_template_id: 2_000_000_000 });
    expect([stolen.status, stolen.body]).toEqual([404, none.body]);
    expect(stolen.body.code).toBe('message_template_not_found');
    // Bravo's template into alpha's conversation: the conversation is not bravo's.
    const across = await post(b, { conversation_id: conversationId, message_template_id: theirs.body.id });
    expect([across.status, across.body.code]).toEqual([404, 'conversation_not_found']);
    const wrong = await post(a, { conversation_id: conversationId, message_template_id: 'one' });
    expect([wrong.status, wrong.body.code]).toEqual([422, 'invalid_input']);
    const [{ n: after } = { n: 0 }] = await sql<{ n: number }>('select count(*)::int as n from message');
    expect(after).toBe(before);
  });
});
