import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiCall,
  apiMultipart,
  BASE,
  call,
  type FilePart,
  type Harness,
  keptRecordings,
  makeAccount,
  mediaFixture,
  openHarness,
  type TestAccount,
} from './support/harness.ts';

/*
 * create_message and get_messages (the original service's messages resource): a message posted
 * through the API is a message of the conversation as a page reply is (the spec'd operations show
 * it, webhooks and notifications hear of it); its text is kept as written, or as the safe subset of
 * HTML; get_messages pages the account's messages newest first, by conversation and by time.
 */

let h: Harness;
let a: TestAccount;
let b: TestAccount;
let first: { id: number; slug: string };
let second: { id: number; slug: string };
let others: { id: number; slug: string };

const auth = (t: TestAccount) => ({ authorization: `Bearer ${t.token}` });
const post = (t: TestAccount, body: unknown, headers: Record<string, string> = {}, query = '') =>
  apiCall(h, 'POST', `/messages/create_message${query}`, { ...auth(t), ...headers }, body);
/** create_message as multipart/form-data: the members as fields, the file as `recording`. */
const postWithRecording = (
  t: TestAccount,
  fields: Record<string, string>,
  file?: FilePart,
  headers: Record<string, string> = {},
) => apiMultipart(h, 'POST', '/messages/create_message', { ...auth(t), ...headers }, fields, file);
const list = (t: TestAccount, query = '') => apiCall(h, 'GET', `/messages/get_messages${query}`, auth(t));
const conversation = async (t: TestAccount, slug: string) => {
  const made = await apiCall(h, 'POST', '/conversations/create_conversation', auth(t), { title: slug, slug });
  expect(made.status).toBe(201);
  return { id: made.body.id as number, slug };
};
const count = async () =>
  Number(
    ((await h.db.orm.em.fork().getConnection().execute('select count(*)::int as n from message')) as { n: number }[])[0]
      ?.n,
  );

beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'alpha');
  b = await makeAccount(h, 'bravo');
  first = await conversation(a, 'first');
  second = await conversation(a, 'second');
  others = await conversation(b, 'theirs');
});
afterAll(async () => h?.close());

describe('create_message', () => {
  it('posts plain text as written, anonymous without an author, and the conversation shows it', async () => {
    const posted = await post(a, { conversation_id: first.id, text: 'Hello\nthere: example.com/x?a=1&b=2 <3' });
    expect(posted.status).toBe(201);
    expect(posted.body).toEqual({
      id: expect.any(Number),
      conversation_id: first.id,
      message_type: 'text',
      recorded_duration_seconds: 0,
      author: { anonymous: true },
      message_url: `https://alpha.example.com/c/first#message-${posted.body.id}`,
      embed_message_url: `https://alpha.example.com/embeds/messages/alpha/${posted.body.id}&show_author=true`,
      download_media_url: null,
      text: 'Hello\nthere: example.com/x?a=1&b=2 <3',
      message_template: null,
      message_created_time: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/),
      message_credated_time_nice: expect.stringMatching(/^[A-Z][a-z]+ \d{1,2}(st|nd|rd|th), \d{4} \d\d:\d\d[AP]M UTC$/),
      internal: false,
      parent_message_id: null,
      at_seconds: null,
      plays: 0,
      played_by: [],
      reactions: [],
      transcript: null,
    });
    // The spec'd operations show it with the spec's members only.
    const got = await apiCall(h, 'GET', '/conversations/get_conversation?slug=first', auth(a));
    expect(got.body.messages).toEqual([
      Object.fromEntries(
        Object.entries(posted.body).filter(
          ([k]) =>
            ![
              'message_template',
              'message_created_time',
              'message_credated_time_nice',
              'internal',
              'parent_message_id',
              'at_seconds',
              'plays',
              'played_by',
              'reactions',
              'transcript',
            ].includes(k),
        ),
      ),
    ]);
    // The answer (built by the statement that wrote it) is the message as get_messages reads it.
    const read = await list(a, '?conversation_slug=first');
    expect(read.body.messages.find((m: { id: number }) => m.id === posted.body.id)).toEqual(posted.body);
    // The open pages hear of it as of a page reply (the live feed's row, written by the same statement).
    const events = (await h.db.orm.em
      .fork()
      .getConnection()
      .execute('select kind from live_event where message_id = ?', [posted.body.id])) as { kind: string }[];
    expect(events.length).toBeGreaterThan(0);
  });

  it('takes its members from the query, as the original documents them, or from a form', async () => {
    const q = await post(
      a,
      undefined,
      {},
      `?conversation_id=${second.id}&text=From%20the%20query&user_email=owner%40alpha.example.com`,
    );
    expect(q.status).toBe(201);
    expect(q.body).toMatchObject({
      conversation_id: second.id,
      text: 'From the query',
      author: { anonymous: false, email: 'owner@alpha.example.com', name: 'Owner alpha' },
    });
    // The body's member wins over the query's.
    const both = await post(a, { text: 'From the body' }, {}, `?conversation_id=${second.id}&text=ignored`);
    expect([both.status, both.body.text]).toEqual([201, 'From the body']);
    const form = await call(
      h,
      new Request(`${BASE}/api/v1/messages/create_message`, {
        method: 'POST',
        headers: { ...auth(a), 'content-type': 'application/x-www-form-urlencoded' },
        body: `conversation_id=${second.id}&text=From+a+form`,
      }),
    );
    expect([form.status, form.body.text]).toEqual([201, 'From a form']);
  });

  it('keeps markup as the safe subset of HTML: scripts, event attributes and javascript: links gone', async () => {
    const posted = await post(a, {
      conversation_id: first.id,
      text:
        '<p onclick="steal()">Hi <b>there</b> <script>alert(1)</script><img src=x onerror=alert(2)>' +
        '<a href="javascript:alert(3)">bad</a> <a href="https://ok.example/p" target="_blank">ok</a> see https://bare.example/q?a=1&amp;b=2</p>' +
        '<style>p{}</style><iframe src="https://evil.example"></iframe><ul><li>one</li></ul>',
    });
    expect(posted.status).toBe(201);
    expect(posted.body.text).toBe(
      '<p>Hi <b>there</b> bad <a href="https://ok.example/p" rel="nofollow ugc noopener">ok</a> ' +
        'see <a href="https://bare.example/q?a=1&amp;b=2" rel="nofollow ugc noopener">https://bare.example/q?a=1&amp;b=2</a></p><ul><li>one</li></ul>',
    );
    // The page shows it as HTML, sanitized again; the spec's conversation shows its text as kept.
    const page = await call(h, new Request('https://alpha.example.com/c/first'));
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain('<div class="text rich"><p>Hi <b>there</b>');
    expect(String(page.body)).not.toMatch(/<script>alert|onerror|onclick|javascript:/);
    // Nothing but disallowed markup: refused, nothing posted.
    const before = await count();
    const empty = await post(a, { conversation_id: first.id, text: '<script>alert(1)</script><img src=x>' });
    expect([empty.status, empty.body.code]).toEqual([422, 'invalid_input']);
    expect(await count()).toBe(before);
  });

  it('refuses what it cannot post with the reason, and posts nothing', async () => {
    const before = await count();
    const refusals: [unknown, string, number, string][] = [
      [{ text: 'x' }, '', 422, 'Required parameter conversation_id is missing'],
      [{ conversation_id: first.id }, '', 422, 'Required parameter text is missing'],
      [{ conversation_id: first.id, text: '   ' }, '', 422, 'text: Write a message, or send a recording.'],
      [{ conversation_id: first.id, text: 'a\u0000b' }, '', 422, 'text: The message must not contain NUL characters'],
      [
        { conversation_id: first.id, text: 'x'.repeat(10_001) },
        '',
        422,
        'text: A message is at most 10000 characters.',
      ],
      [
        { conversation_id: 'one', text: 'x' },
        '',
        422,
        'conversation_id: Invalid input: expected number, received string',
      ],
      [{ conversation_id: others.id, text: 'x' }, '', 404, 'No conversations found'],
      [{ conversation_id: 2_000_000_000, text: 'x' }, '', 404, 'No conversations found'],
      [
        { conversation_id: first.id, text: 'x', user_email: 'owner@bravo.example.com' },
        '',
        422,
        "user_email: owner@bravo.example.com is not the account's owner or a member of its team",
      ],
    ];
    for (const [body, query, status, error] of refusals) {
      const r = await post(a, body, {}, query);
      expect([r.status, r.body.error], JSON.stringify(body).slice(0, 80)).toEqual([status, error]);
    }
    expect((await post(b, { conversation_id: first.id, text: 'x' })).status).toBe(404);
    expect(
      (await apiCall(h, 'POST', '/messages/create_message', {}, { conversation_id: first.id, text: 'x' })).status,
    ).toBe(401);
    expect(await count()).toBe(before);
  });

  it('posts an internal note from the query or the body, which the spec’d operations never show', async () => {
    const q = await post(a, undefined, {}, `?conversation_id=${second.id}&text=Team%20only&internal=true`);
    expect([q.status, q.body.internal]).toEqual([201, true]);
    const b = await post(a, { conversation_id: second.id, text: 'Also team only', internal: true });
    expect([b.status, b.body.internal]).toEqual([201, true]);
    const wrong = await post(a, { conversation_id: second.id, text: 'x', internal: 'yes' });
    expect([wrong.status, wrong.body.code]).toEqual([422, 'invalid_input']);
    const got = await apiCall(h, 'GET', '/conversations/get_conversation?slug=second', auth(a));
    expect(got.body.messages.map((m: { text: string }) => m.text)).not.toContain('Team only');
    const listed = await list(a, '?conversation_slug=second');
    expect(listed.body.messages.slice(0, 2).map((m: { internal: boolean }) => m.internal)).toEqual([true, true]);
  });

  it('replies in a thread one level deep; the conversation’s operations list the reply as a message', async () => {
    const root = await post(a, { conversation_id: first.id, text: 'Which plan are you on?' });
    const reply = await post(a, { conversation_id: first.id, text: 'The yearly one', parent_message_id: root.body.id });
    expect([reply.status, reply.body.parent_message_id]).toEqual([201, root.body.id]);
    // A reply to the reply joins the same thread.
    const deeper = await post(a, { conversation_id: first.id, text: 'Thanks', parent_message_id: reply.body.id });
    expect(deeper.body.parent_message_id).toBe(root.body.id);
    const got = await apiCall(h, 'GET', '/conversations/get_conversation?slug=first', auth(a));
    const listed = got.body.messages.find((m: { id: number }) => m.id === deeper.body.id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('parent_message_id');
    const read = await list(a, '?conversation_slug=first');
    expect(read.body.messages.find((m: { id: number }) => m.id === deeper.body.id).parent_message_id).toBe(
      root.body.id,
    );
    // The page shows it in its thread, under the thread's first message.
    const page = await call(h, new Request('https://alpha.example.com/c/first'));
    expect(String(page.body)).toContain(
      `<li data-thread="${root.body.id}"><article class="message" id="message-${deeper.body.id}">`,
    );
    // A reply in a note's thread is a note.
    const note = await post(a, { conversation_id: first.id, text: 'Team: check the plan', internal: true });
    const underNote = await post(a, { conversation_id: first.id, text: 'Done', parent_message_id: note.body.id });
    expect([underNote.body.internal, underNote.body.parent_message_id]).toEqual([true, note.body.id]);
  });

  it('refuses a parent of another conversation, another account, or none, posting nothing', async () => {
    const elsewhere = await post(a, { conversation_id: second.id, text: 'In the second' });
    const theirs = await post(b, { conversation_id: others.id, text: 'Bravo words' });
    const before = await count();
    for (const parent of [elsewhere.body.id, theirs.body.id, 2_000_000_000]) {
      const r = await post(a, { conversation_id: first.id, text: 'Lost', parent_message_id: parent });
      expect([r.status, r.body]).toEqual([
        422,
        { error: `parent_message_id: no message ${parent} in conversation ${first.id}`, code: 'invalid_input' },
      ]);
    }
    const wrong = await post(a, { conversation_id: first.id, text: 'x', parent_message_id: 'one' });
    expect([wrong.status, wrong.body.code]).toEqual([422, 'invalid_input']);
    expect(await count()).toBe(before);
  });

  it('posts once per Idempotency-Key, and refuses the key for another request', async () => {
    const key = { 'idempotency-key': 'reply-1' };
    const one = await post(a, { conversation_id: first.id, text: 'Once' }, key);
    const again = await post(a, { conversation_id: first.id, text: 'Once' }, key);
    expect([one.status, again.status]).toEqual([201, 201]);
    expect(again.body).toEqual(one.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await post(a, { conversation_id: first.id, text: 'Something else' }, key);
    expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
    // Another account's same key is its own.
    expect((await post(b, { conversation_id: others.id, text: 'Once' }, key)).status).toBe(201);
  });

  it('is a tRPC procedure too', async () => {
    const r = await call(
      h,
      new Request(`${BASE}/trpc/messages.createMessage`, {
        method: 'POST',
        headers: { ...auth(a), 'content-type': 'application/json' },
        body: JSON.stringify({ conversation_id: second.id, text: 'Over tRPC' }),
      }),
    );
    expect(r.status).toBe(200);
    expect(r.body.result.data).toMatchObject({ conversation_id: second.id, text: 'Over tRPC', internal: false });
  });
});

describe('get_messages', () => {
  it('pages the account’s messages newest first, of all conversations or of one, and by time', async () => {
    const all = await list(a);
    expect(all.status).toBe(200);
    const ids = all.body.messages.map((m: { id: number }) => m.id);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(new Set(all.body.messages.map((m: { conversation_id: number }) => m.conversation_id))).toEqual(
      new Set([first.id, second.id]),
    );
    const one = await list(a, '?conversation_slug=SECOND');
    expect(one.body.messages.every((m: { conversation_id: number }) => m.conversation_id === second.id)).toBe(true);
    expect(one.body.messages[0].text).toBe('Over tRPC');

    // 120 more in `second`: pages of 50, Link to the next, a page past the last is the 404.
    for (let i = 0; i < 120; i++) await post(a, { conversation_id: second.id, text: `Bulk ${i}` });
    const p1 = await list(a, '?conversation_slug=second');
    const p3 = await list(a, '?conversation_slug=second&page=3');
    expect(p1.body.messages).toHaveLength(50);
    expect(p1.body.messages[0].text).toBe('Bulk 119');
    expect(p1.headers.get('link')).toContain('page=2>; rel="next"');
    expect(p3.body.messages.length).toBeGreaterThan(0);
    const past = await list(a, '?conversation_slug=second&page=9');
    expect([past.status, past.body]).toEqual([404, { error: 'No messages found', code: 'message_not_found' }]);

    // By time: after the newest one's time, nothing; before the first, nothing; around it, it.
    const newest = p1.body.messages[0];
    const at = `${newest.message_created_time.replace(' ', 'T')}Z`;
    const around = await list(
      a,
      `?created_after=${encodeURIComponent(at)}&created_before=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );
    expect(around.body.messages.map((m: { id: number }) => m.id)).toEqual([newest.id]);
    expect((await list(a, '?created_before=2000-01-01T00:00:00Z')).status).toBe(404);
  });

  it('says what it cannot read: no such conversation (no fallback), bad pages and times, another account', async () => {
    expect((await list(a, '?conversation_slug=nope')).body).toEqual({
      error: 'No conversations found',
      code: 'conversation_not_found',
    });
    expect((await list(a, '?conversation_slug=theirs')).status).toBe(404);
    for (const q of ['?page=0', '?page=x', '?created_after=yesterday', '?created_before=2026-13-01T00:00:00Z']) {
      expect((await list(a, q)).status, q).toBe(422);
    }
    // Bravo sees only its own.
    const theirs = await list(b);
    expect(theirs.body.messages.every((m: { conversation_id: number }) => m.conversation_id === others.id)).toBe(true);
    const empty = await makeAccount(h, 'charlie');
    expect((await list(empty)).body).toEqual({ error: 'No messages found', code: 'message_not_found' });
  });
});

describe('create_message with a recording (multipart)', () => {
  it('keeps it, measured from its bytes, and the message plays it', async () => {
    const video = mediaFixture('video-3s.webm', 'video/webm');
    const posted = await postWithRecording(a, { conversation_id: String(second.id), text: 'Watch this' }, video);
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({
      conversation_id: second.id,
      message_type: 'video',
      recorded_duration_seconds: 3,
      text: 'Watch this',
      download_media_url: `https://alpha.example.com/media/alpha/${posted.body.id}`,
    });
    const played = await call(h, new Request(`${posted.body.download_media_url}?c=second`));
    expect(played.status).toBe(200);
    expect(played.headers.get('content-length')).toBe(String(video.bytes.length));
    // A recording alone, marked as a screen's; an audio file is audio whatever it is called.
    const screen = await postWithRecording(a, { conversation_id: String(second.id), recording_kind: 'screen' }, video);
    expect(screen.body).toMatchObject({ message_type: 'screen', text: '' });
    const audio = await postWithRecording(
      a,
      { conversation_id: String(second.id), recording_kind: 'screen', internal: 'true' },
      mediaFixture('audio-3s.ogg', 'audio/ogg'),
    );
    expect(audio.body).toMatchObject({ message_type: 'audio', internal: true });
    // The same request again (its Idempotency-Key) answers the first message and keeps no second copy.
    const keyed = { 'idempotency-key': 'recorded-once' };
    const once = await postWithRecording(a, { conversation_id: String(second.id) }, video, keyed);
    expect(once.status).toBe(201);
    const kept = await keptRecordings(h);
    const again = await postWithRecording(a, { conversation_id: String(second.id) }, video, keyed);
    expect([again.status, again.body.id, again.headers.get('idempotent-replayed')]).toEqual([
      201,
      once.body.id,
      'true',
    ]);
    expect(await keptRecordings(h)).toBe(kept);
  });

  it('refuses what is no recording, or a recording it cannot take, and keeps nothing', async () => {
    const before = { messages: await count(), recordings: await keptRecordings(h) };
    const video = mediaFixture('video-3s.webm', 'video/webm');
    const cases: [Record<string, string>, FilePart | undefined, number, string][] = [
      [
        { conversation_id: String(second.id) },
        { name: 'a.webm', type: 'video/webm', bytes: new TextEncoder().encode('not a video') },
        422,
        'recording: ',
      ],
      [{ conversation_id: String(others.id), text: 'x' }, video, 404, 'No conversations found'],
      [{ conversation_id: '999999', text: 'x' }, video, 404, 'No conversations found'],
      [{ conversation_id: String(second.id), recording_kind: 'hologram' }, video, 422, 'recording_kind'],
      [
        { conversation_id: String(second.id), text: 'x', parent_message_id: '99999999' },
        video,
        422,
        'parent_message_id',
      ],
      [{ conversation_id: String(second.id), user_email: 'nobody@else.example' }, video, 422, 'user_email'],
      [{ text: 'no conversation' }, video, 422, 'conversation_id'],
      [{ conversation_id: String(second.id), text: 'nul \u0000' }, video, 400, ''],
    ];
    for (const [fields, file, status, says] of cases) {
      const refused = await postWithRecording(a, fields, file);
      expect(refused.status, JSON.stringify(fields)).toBe(status);
      expect(refused.body.error, JSON.stringify(fields)).toContain(says);
      expect(typeof refused.body.code).toBe('string');
    }
    // Without a token nothing of the body is read, let alone kept.
    const anonymous = await call(
      h,
      new Request(`${BASE}/api/v1/messages/create_message`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
        body: '--x\r\ncontent-disposition: form-data; name="recording"; filename="a.webm"\r\n\r\nbytes\r\n--x--\r\n',
      }),
    );
    expect(anonymous.status).toBe(401);
    // recording_kind means nothing without a recording.
    expect((await post(a, { conversation_id: second.id, text: 'x', recording_kind: 'screen' })).status).toBe(422);
    // Another operation takes no multipart body.
    const form = new FormData();
    form.append('title', 'x');
    const encoded = new Response(form);
    const other = await call(
      h,
      new Request(`${BASE}/api/v1/conversations/create_conversation`, {
        method: 'POST',
        headers: { ...auth(a), 'content-type': encoded.headers.get('content-type') ?? '' },
        body: await encoded.arrayBuffer(),
      }),
    );
    expect(other.status).toBe(415);
    expect(await count()).toBe(before.messages);
    expect(await keptRecordings(h)).toBe(before.recordings);
  });
});
