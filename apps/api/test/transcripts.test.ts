import { mkdtempSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZMessageTranscribedEvent } from '@convo/domain';
import { ALL_FORMATS, BufferSource, BufferTarget, Conversion, Input, Output, WebMOutputFormat } from 'mediabunny';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { recordingAudio } from '../src/media/extract-audio.ts';
import { openAiTranscriber } from '../src/media/openai-transcriber.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { startTranscriptWorker } from '../src/workers/transcripts.ts';
import { listen, openStream } from './support/events.ts';
import {
  apiCall,
  apiMultipart,
  auth,
  call,
  type FilePart,
  type Harness,
  mediaFixture,
  rows,
  until,
} from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { Visitor } from './support/site.ts';
import { engine, json, type Received } from './support/speech-engine.ts';
import { openReceiver } from './support/webhooks.ts';

/*
 * Transcripts (issue 43) against a stand-in speech engine speaking OpenAI's protocol on
 * 127.0.0.1: a recording posted is transcribed once by the job (its audio alone, remuxed, under
 * the limit), get_messages carries the transcript, the captions are served beside the recording
 * to exactly those who may play it, the page shows them and the words, and the inbox's search
 * finds what was said. An engine that fails is tried again, then given up with its reason.
 */

const HOST = 'https://tx.example.com';
const TOKEN = 'tx-site-token-0123456789abc';
const OTHER_TOKEN = 'other-site-token-0123456789';

let site: PeopleSite;
let h: Harness;
let speech: Awaited<ReturnType<typeof engine>>;
/** What the engine answers next: a transcript, or a failure's status. */
let answer: { status: number; said: string } = { status: 200, said: 'Please check the invoice numbers' };
let worker: QueueWorker;
let receiver: Awaited<ReturnType<typeof openReceiver>>;
let listener: { close(): Promise<void> };
const audioDir = mkdtempSync(join(tmpdir(), 'convo-test-transcripts-'));

beforeAll(async () => {
  speech = await engine((_got: Received, res) => {
    if (answer.status !== 200) return json(res, answer.status, { error: { message: 'the engine is busy' } });
    json(res, 200, {
      task: 'transcribe',
      language: 'en',
      text: answer.said,
      segments: [
        { id: 0, start: 0.2, end: 1.4, text: ` ${answer.said.split(' ').slice(0, 2).join(' ')}` },
        { id: 1, start: 1.5, end: 2.9, text: ` ${answer.said.split(' ').slice(2).join(' ')}` },
      ],
    });
  });
  site = await openPeopleSite(
    {
      accounts: [
        {
          key: 'tx',
          name: 'Tx',
          host: HOST,
          owner: 'olive@tx.example',
          users: [
            { email: 'olive@tx.example', name: 'Olive Owner' },
            { email: 'ada@tx.example', name: 'Ada Admin', team: 'admin' },
            { email: 'mia@tx.example', name: 'Mia Member', team: 'member' },
            { email: 'pat@client.example', name: 'Pat Participant' },
            { email: 'sam@client.example', name: 'Sam Stranger' },
          ],
          tokens: [{ name: 'tests', token: TOKEN }],
          conversations: [
            { title: 'Open', slug: 'open', messages: [{ author: 'olive@tx.example', text: 'Hello' }] },
            {
              title: 'Private',
              slug: 'private',
              anyone_can_post: false,
              members: ['olive@tx.example', 'pat@client.example'],
              messages: [{ author: 'olive@tx.example', text: 'Between us' }],
            },
          ],
        },
        {
          key: 'other',
          name: 'Other',
          host: 'https://other.example.com',
          owner: 'oscar@other.example',
          users: [{ email: 'oscar@other.example', name: 'Oscar' }],
          tokens: [{ name: 'tests', token: OTHER_TOKEN }],
          conversations: [],
        },
      ],
    },
    { services: { transcribing: true, webhookTargets: { allowHttp: true, allowPrivate: true } } },
  );
  h = site.h;
  receiver = await openReceiver(h, TOKEN, ['message_transcribed']);
  listener = listen(h);
  worker = startTranscriptWorker(h.services.transcripts, {
    transcriber: openAiTranscriber({ url: speech.url, model: 'whisper-test', apiKey: 'engine-key', timeoutMs: 5_000 }),
    audio: recordingAudio({ store: h.services.media.store, dir: audioDir, maxBytes: 24 * 1024 * 1024 }),
    logger: createLogger('silent'),
    timeoutMs: 5_000,
    retryScale: 0.001,
    intervalMs: 50,
  });
});
afterAll(async () => {
  await worker?.stop();
  await listener?.close();
  await receiver?.close();
  await speech?.close();
  await site?.close();
});

const idOf = async (slug: string) =>
  (await apiCall(h, 'GET', `/conversations/get_conversation?slug=${slug}`, auth(TOKEN))).body.id as number;

/** A recording posted by the owner through the API into `slug`: its message as create_message answers it. */
async function postRecording(slug: string, file: FilePart, text = '') {
  const posted = await apiMultipart(
    h,
    'POST',
    '/messages/create_message',
    auth(TOKEN),
    { conversation_id: String(await idOf(slug)), text },
    file,
  );
  expect(posted.status).toBe(201);
  return posted.body as { id: number; download_media_url: string; transcript: Record<string, unknown> };
}

/** The message as get_messages lists it. */
async function listed(id: number) {
  const page = await apiCall(h, 'GET', '/messages/get_messages?limit=100', auth(TOKEN));
  return (page.body.messages as { id: number; transcript: Record<string, unknown> | null }[]).find((m) => m.id === id);
}

const statusOf = async (id: number) => (await listed(id))?.transcript?.status;

describe('a recording posted is transcribed once', () => {
  let privateId: number;
  let captions: string;

  it('sends the engine the audio alone, and get_messages carries the transcript', async () => {
    speech.received.length = 0;
    const video = mediaFixture('video-3s.webm', 'video/webm');
    const posted = await postRecording('private', video, 'Have a look');
    privateId = posted.id;
    expect(posted.transcript).toEqual({ status: 'pending', language: null, text: null, captions_url: null });
    await until(async () => (await statusOf(privateId)) === 'complete');
    captions = `${posted.download_media_url}/captions.vtt`;
    expect((await listed(privateId))?.transcript).toEqual({
      status: 'complete',
      language: 'en',
      text: 'Please check the invoice numbers',
      captions_url: captions,
    });
    // One request: the Opus track copied into Ogg, smaller than the recording, with the model and key.
    expect(speech.received).toHaveLength(1);
    const got = speech.received[0];
    expect(got?.path).toBe('/v1/audio/transcriptions');
    expect(got?.authorization).toBe('Bearer engine-key');
    expect(got?.fields).toMatchObject({ model: 'whisper-test', response_format: 'verbose_json' });
    expect(got?.file?.name).toBe('audio.ogg');
    expect(got?.file?.bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(got?.file?.bytes.length).toBeLessThan(video.bytes.length);
    // The account's webhook hears of it once, signed, with the transcript as get_messages shows it.
    await until(() => receiver.received.length >= 1);
    const delivered = receiver.received.map((r) =>
      ZMessageTranscribedEvent.parse(new Webhook(receiver.secret).verify(r.body, r.headers as Record<string, string>)),
    );
    expect(delivered.map((e) => e.data)).toEqual([
      {
        message_id: privateId,
        conversation_id: await idOf('private'),
        transcript: {
          status: 'complete',
          language: 'en',
          text: 'Please check the invoice numbers',
          captions_url: captions,
        },
      },
    ]);
    // Its audio files are gone once the engine had them; a text message has no transcript.
    expect(await readdir(audioDir)).toEqual([]);
    const text = await apiCall(h, 'POST', '/messages/create_message', auth(TOKEN), {
      conversation_id: await idOf('private'),
      text: 'Just words',
    });
    expect(text.body.transcript).toBeNull();
  });

  it('serves the captions to exactly those who may play the recording', async () => {
    const path = new URL(captions).pathname;
    const vtt = await call(h, new Request(captions, { headers: auth(TOKEN) }));
    expect(vtt.status).toBe(200);
    expect(vtt.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    expect(vtt.body).toBe(
      'WEBVTT\n\n00:00:00.200 --> 00:00:01.400\nPlease check\n\n00:00:01.500 --> 00:00:02.900\nthe invoice numbers\n\n',
    );
    // Each person meets the captions as they meet the recording: the owner, an admin, a member
    // and the participant signed in, a visitor, a stranger signed in.
    const recording = path.replace(/\/captions\.vtt$/, '');
    const people: [string, Visitor][] = [['a visitor', new Visitor(h, HOST)]];
    for (const email of [
      'olive@tx.example',
      'ada@tx.example',
      'mia@tx.example',
      'pat@client.example',
      'sam@client.example',
    ]) {
      people.push([email, await signIn(site, HOST, email)]);
    }
    const met: Record<string, [number, number]> = {};
    for (const [who, v] of people)
      met[who] = [(await v.get(`${recording}?c=private`)).status, (await v.get(`${path}?c=private`)).status];
    expect(met).toEqual({
      'a visitor': [404, 404],
      'olive@tx.example': [200, 200],
      'ada@tx.example': [200, 200],
      // A member of the team sees the conversations they are in (this one is not theirs).
      'mia@tx.example': [404, 404],
      'pat@client.example': [200, 200],
      'sam@client.example': [404, 404],
    });
    expect((await call(h, new Request(captions, { headers: auth(OTHER_TOKEN) }))).status).toBe(404);
    const elsewhere = new URL(path, 'https://other.example.com').href;
    expect((await call(h, new Request(elsewhere, { headers: auth(OTHER_TOKEN) }))).status).toBe(404);
  });

  it('shows captions on the player and the words under it, and the inbox finds what was said', async () => {
    const owner = await signIn(site, HOST, 'olive@tx.example');
    const page = await owner.get('/c/private');
    expect(page.status).toBe(200);
    expect(page.html).toContain(
      `<track kind="captions" default src="/media/tx/${privateId}/captions.vtt?c=private" label="Captions" srclang="en">`,
    );
    expect(page.html).toMatch(/<details class="transcript"><summary>Transcript<\/summary>/);
    expect(page.html).toContain(
      `data-seek="1.5" data-player="message-${privateId}" aria-label="Play from 0:01">0:01</a> the invoice numbers`,
    );
    const found = await owner.get('/?q=invoice');
    expect(found.html).toContain('href="/c/private"');
    expect((await owner.get('/?q=nowhere-said')).html).not.toContain('href="/c/private"');
  });
});

describe("the team's hand on a transcript", () => {
  let id: number;

  it('corrects its words, a line a caption: the captions, the page and the search follow', async () => {
    id = (await postRecording('private', mediaFixture('audio-3s.webm', 'audio/webm'))).id;
    await until(async () => (await statusOf(id)) === 'complete');
    const owner = await signIn(site, HOST, 'olive@tx.example');
    const page = await owner.get('/c/private');
    expect(page.html).toContain('<summary>Correct the transcript</summary>');
    const csrf = owner.hidden('csrf');
    // An open page hears of the correction (and reads the message again).
    const stream = await openStream(h, `${HOST}/c/private/events`, owner.cookieHeader());
    const path = `/c/private/messages/${id}/transcript`;
    // The lines must stay one a caption: the page says so and changes nothing.
    const wrong = await owner.post(path, { csrf, action: 'correct', lines: 'One line for two captions' });
    expect(wrong.status).toBe(422);
    expect(wrong.html).toContain('Keep one line for each of the 2 captions');
    const fixed = await owner.post(path, { csrf, action: 'correct', lines: 'Please check\r\nthe receipt numbers\r\n' });
    expect([fixed.status, fixed.headers.get('location')]).toEqual([303, `/c/private#message-${id}`]);
    const told = await stream.next((e) => e.event === 'transcribed' && JSON.parse(e.data ?? '{}').message_id === id);
    expect(JSON.parse(told.data ?? '{}')).toEqual({ message_id: id });
    stream.close();
    const item = await owner.get(`/c/private/messages/${id}`);
    expect(item.html).toContain('the receipt numbers');
    expect(item.html).toContain(`<track kind="captions" default src="/media/tx/${id}/captions.vtt?c=private"`);
    const vtt = await call(h, new Request(`${HOST}/media/tx/${id}/captions.vtt`, { headers: auth(TOKEN) }));
    expect(vtt.body).toContain('00:00:01.500 --> 00:00:02.900\nthe receipt numbers');
    expect((await listed(id))?.transcript?.text).toBe('Please check the receipt numbers');
    expect((await owner.get('/?q=receipt')).html).toContain('href="/c/private"');
  });

  it("is the team's alone: a participant is refused, a visitor meets the 404", async () => {
    const pat = await signIn(site, HOST, 'pat@client.example');
    const page = await pat.get('/c/private');
    expect(page.html).toContain('<summary>Transcript</summary>');
    expect(page.html).not.toContain('Correct the transcript');
    const path = `/c/private/messages/${id}/transcript`;
    expect((await pat.post(path, { csrf: pat.hidden('csrf'), action: 'retry' })).status).toBe(403);
    const visitor = new Visitor(h, HOST);
    await visitor.get('/c/open');
    expect((await visitor.post(path, { csrf: visitor.hidden('csrf'), action: 'retry' })).status).toBe(404);
    expect((await listed(id))?.transcript?.status).toBe('complete');
  });
});

describe('an engine that fails', () => {
  it('is tried again while it says it is busy, and a refusal fails the transcript with its reason', async () => {
    answer = { status: 503, said: '' };
    speech.received.length = 0;
    const posted = await postRecording('open', mediaFixture('audio-3s.m4a', 'audio/mp4'));
    await until(() => speech.received.length >= 2);
    expect(await statusOf(posted.id)).toBe('pending');
    expect(speech.received[0]?.file?.name).toBe('audio.m4a');
    answer = { status: 400, said: '' };
    await until(async () => (await statusOf(posted.id)) === 'failed');
    expect((await listed(posted.id))?.transcript).toEqual({
      status: 'failed',
      language: null,
      text: null,
      captions_url: null,
    });
    // The team sees why, and makes it again once the engine is back.
    const owner = await signIn(site, HOST, 'olive@tx.example');
    const page = await owner.get('/c/open');
    expect(page.html).toMatch(/No transcript: the speech engine answered 400[^<]*\. <form/);
    answer = { status: 200, said: 'Please check the invoice numbers' };
    const again = await owner.post(`/c/open/messages/${posted.id}/transcript`, {
      csrf: owner.hidden('csrf'),
      action: 'retry',
    });
    expect(again.status).toBe(303);
    await until(async () => (await statusOf(posted.id)) === 'complete');
  });

  it('says no_audio for a recording without sound, and asks the engine nothing', async () => {
    speech.received.length = 0;
    const posted = await postRecording('open', await silentVideo());
    await until(async () => (await statusOf(posted.id)) === 'no_audio');
    expect(speech.received).toHaveLength(0);
  });
});

/** The video fixture with its audio track dropped (mediabunny, copying the video's packets). */
async function silentVideo(): Promise<FilePart> {
  const source = mediaFixture('video-3s.webm', 'video/webm');
  const input = new Input({ formats: ALL_FORMATS, source: new BufferSource(source.bytes) });
  const target = new BufferTarget();
  const output = new Output({ format: new WebMOutputFormat(), target });
  const conversion = await Conversion.init({ input, output, audio: { discard: true }, copy: { mode: 'forced' } });
  await conversion.execute();
  return { name: 'silent.webm', type: 'video/webm', bytes: new Uint8Array(target.buffer ?? new ArrayBuffer(0)) };
}

describe('a recording gone', () => {
  it('takes its transcript with it when the hourly purge runs', async () => {
    const keys = async () =>
      (
        await rows<{ n: number }>(
          h,
          `select count(*)::int as n from transcript t join account a on a.id = t.account_id where a.key = 'tx'`,
        )
      )[0]?.n;
    const before = await keys();
    const open = await idOf('open');
    const deleted = await apiCall(h, 'POST', '/conversations/delete_conversation', auth(TOKEN), {
      conversation_id: open,
    });
    expect(deleted.status).toBe(200);
    // Its two recordings (the M4A, the silent video) went with it.
    expect(await h.services.transcripts.purge()).toBe(2);
    expect(await keys()).toBe((before ?? 0) - 2);
  });
});
