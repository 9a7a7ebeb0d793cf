import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { loadSeed, PgMediaReferences } from '@convo/db';
import { sweepRecordings } from '@convo/domain';
import { ALL_FORMATS, BufferSource, EncodedPacketSink, Input } from 'mediabunny';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingAudio } from '../src/media/extract-audio.ts';
import { s3Media } from '../src/media/s3-backend.ts';
import type { S3MediaStore, S3Options } from '../src/media/s3-store.ts';
import { auth, call, type Harness, openHarness } from './support/harness.ts';
import { type Upload, Visitor } from './support/site.ts';

/*
 * Recordings in S3-compatible object storage, against a real S3-protocol server (s3rver, from
 * npm): the reply form's recording lands in the bucket, the media URL checks who may see it and
 * then redirects to a presigned link (or streams with ranges), the bytes go with the message, and
 * a bucket that cannot be reached is a clear 503 that changes nothing, after which the retry works.
 */

const HOST = 'https://s3.example.com';
const TOKEN = 's3-site-token-0123456789';
const BUCKET = 'convo-media';
/** The bucket of the second server, which streams: a deployment's bucket is its own. */
const STREAMED_BUCKET = 'convo-media-streamed';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;
const AUDIO: Upload = {
  name: 'audio-3s.ogg',
  type: 'audio/ogg',
  bytes: new Uint8Array(readFileSync(join(FIXTURES, 'audio-3s.ogg'))),
};

let s3: S3rver;
let s3Dir: string;
let port: number;
let h: Harness;
let streamed: Harness;

/** Starts s3rver on `port` (0: any), keeping its objects in s3Dir across restarts. */
async function startS3(on = 0) {
  s3 = new S3rver({
    address: '127.0.0.1',
    port: on,
    silent: true,
    directory: s3Dir,
    configureBuckets: [
      { name: BUCKET, configs: [] },
      { name: STREAMED_BUCKET, configs: [] },
    ],
  });
  port = (await s3.run()).port;
}

const options = (redirect: boolean): S3Options => ({
  bucket: redirect ? BUCKET : STREAMED_BUCKET,
  redirect,
  client: {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    // A bucket that is down answers at once: no retries with backoff in the way of the 503.
    maxAttempts: 1,
  },
});

const SEED = {
  accounts: [
    {
      key: 's3',
      name: 'S3',
      host: HOST,
      owner: 'sam@s3.example',
      users: [{ email: 'sam@s3.example', name: 'Sam' }],
      tokens: [{ name: 'tests', token: TOKEN }],
      conversations: [
        { title: 'Open', slug: 'open', anyone_can_post: true, allow_anonymous_messages: true },
        { title: 'Private', slug: 'private', anyone_can_post: false, allow_anonymous_messages: true },
      ],
    },
  ],
};

beforeAll(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), 'convo-s3rver-'));
  await startS3();
  const shared = { app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } } };
  h = await openHarness({ ...shared, services: { media: { backend: s3Media(options(true)) } } });
  await loadSeed(h.db.orm.em.fork(), SEED);
  streamed = await openHarness({ ...shared, services: { media: { backend: s3Media(options(false)) } } });
  await loadSeed(streamed.db.orm.em.fork(), SEED);
}, 60_000);

afterAll(async () => {
  await h?.close();
  await streamed?.close();
  await s3?.close();
  rmSync(s3Dir, { recursive: true, force: true });
});

const bucket = () => h.services.media.store as S3MediaStore;

async function objects(): Promise<string[]> {
  const listed = await bucket().client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (listed.Contents ?? []).map((o) => o.Key ?? '');
}

async function send(on: Harness, slug = 'open') {
  const page = await new Visitor(on, HOST).replyWithRecording(slug, {}, AUDIO);
  const id = Number(/#message-(\d+)$/.exec(page.headers.get('location') ?? '')?.[1]);
  return { page, id };
}

async function message(on: Harness, slug: string, id: number) {
  const res = await call(
    on,
    new Request(`http://api.test/api/v1/conversations/get_conversation?slug=${slug}`, { headers: auth(TOKEN) }),
  );
  return (res.body as { messages: Record<string, unknown>[] }).messages.find((m) => m.id === id);
}

describe('recordings in an S3 bucket', () => {
  it('keeps the recording as one object of the bucket, measured like any other', async () => {
    const before = await objects();
    const { page, id } = await send(h);
    expect(page.status).toBe(303);
    expect(await message(h, 'open', id)).toMatchObject({ message_type: 'audio', recorded_duration_seconds: 3 });
    const added = (await objects()).filter((k) => !before.includes(k));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(/^\d+\/[0-9a-f]{32}$/);
  });

  it("gives a WebM's audio alone for its transcript, read from the bucket", async () => {
    const webm = new Uint8Array(readFileSync(join(FIXTURES, 'video-3s.webm')));
    const key = `1/${'ab'.repeat(16)}`;
    await bucket().put(key, [webm], webm.length);
    const dir = mkdtempSync(join(tmpdir(), 'convo-s3-audio-'));
    try {
      const got = await recordingAudio({ store: bucket(), dir, maxBytes: 1_000_000 }).audioOf(key);
      if (!got.outcome.ok) throw new Error(`no audio: ${JSON.stringify(got.outcome)}`);
      const [window] = got.outcome.windows;
      expect(window?.name).toBe('audio.ogg');
      // The recording's audio, packet for packet, and no video: an Ogg of a few kilobytes.
      const sent = new Input({ formats: ALL_FORMATS, source: new BufferSource(await window?.file.arrayBuffer()) });
      const kept = new Input({ formats: ALL_FORMATS, source: new BufferSource(webm) });
      const packets = async (input: Input) => {
        const track = await input.getPrimaryAudioTrack();
        if (!track) throw new Error('no audio track');
        const out: string[] = [];
        for await (const p of new EncodedPacketSink(track).packets()) out.push(Buffer.from(p.data).toString('base64'));
        return out;
      };
      expect(await sent.getPrimaryVideoTrack()).toBeNull();
      expect(await packets(sent)).toEqual(await packets(kept));
      await got.release();
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers the media URL with a 302 to a presigned link of a few minutes, which gives the bytes', async () => {
    const { id } = await send(h);
    const res = await h.app.fetch(new Request(`${HOST}/media/s3/${id}?download=1`));
    expect(res.status).toBe(302);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const link = new URL(res.headers.get('location') ?? '');
    expect(link.origin).toBe(`http://127.0.0.1:${port}`);
    expect(link.searchParams.get('X-Amz-Expires')).toBe('300');
    const bytes = await fetch(link);
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get('content-type')).toBe('audio/ogg');
    expect(bytes.headers.get('content-disposition')).toBe(`attachment; filename="message-${id}.ogg"`);
    expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(AUDIO.bytes);
  });

  it("checks who may see a private conversation's recording before any link is given", async () => {
    // A private conversation's recording, written by the reply store as a member's page would.
    const [conversation] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute<{ id: number; account_id: number }[]>(`select id, account_id from conversation where slug = 'private'`);
    const accountId = conversation?.account_id ?? 0;
    const key = `${accountId}/${'cd'.repeat(16)}`;
    await bucket().put(key, [AUDIO.bytes], 1e6);
    const written = await h.services.replies.insert(accountId, conversation?.id ?? 0, {
      authorId: null,
      text: '',
      submitKey: null,
      media: { key, kind: 'audio', contentType: 'audio/ogg', bytes: AUDIO.bytes.byteLength, seconds: 3 },
    });
    const id = written?.id ?? 0;
    const stranger = await h.app.fetch(new Request(`${HOST}/media/s3/${id}`));
    expect(stranger.status).toBe(404);
    expect(stranger.headers.get('location')).toBeNull();
    const client = await h.app.fetch(new Request(`${HOST}/media/s3/${id}`, { headers: auth(TOKEN) }));
    expect(client.status).toBe(302);
    expect(new Uint8Array(await (await fetch(client.headers.get('location') ?? '')).arrayBuffer())).toEqual(
      AUDIO.bytes,
    );
  });

  it('streams from the bucket with ranges when links are off', async () => {
    const { id } = await send(streamed);
    const whole = await streamed.app.fetch(new Request(`${HOST}/media/s3/${id}`));
    expect(whole.status).toBe(200);
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(AUDIO.bytes);
    const part = await streamed.app.fetch(new Request(`${HOST}/media/s3/${id}`, { headers: { range: 'bytes=10-19' } }));
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${AUDIO.bytes.byteLength}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(AUDIO.bytes.slice(10, 20));
  });

  it('removes objects nothing wants once a day old, and keeps the wanted ones', async () => {
    const orphan = `1/${'ab'.repeat(16)}`;
    await bucket().put(orphan, [new Uint8Array([1, 2, 3])], 1024);
    const kept = await objects();
    const references = new PgMediaReferences(h.db.orm.em.fork());
    expect(await sweepRecordings({ store: bucket(), references })).toBe(0);
    const tomorrow = new Date(Date.now() + 25 * 3600_000);
    expect(await sweepRecordings({ store: bucket(), references }, tomorrow)).toBe(1);
    expect(await objects()).toEqual(kept.filter((k) => k !== orphan));
  });
});

describe('a bucket that cannot be reached', () => {
  it('refuses the recording with a 503 that says so, posts nothing, and the retry works once it is back', async () => {
    const before = await objects();
    const counted = async () =>
      (
        (
          await call(
            h,
            new Request('http://api.test/api/v1/conversations/get_conversation?slug=open', { headers: auth(TOKEN) }),
          )
        ).body as { messages: unknown[] }
      ).messages.length;
    const messages = await counted();
    await s3.close();
    try {
      const down = await send(h);
      expect(down.page.status).toBe(503);
      expect(down.page.html).toContain('cannot be kept right now');
      expect(await counted()).toBe(messages);
    } finally {
      await startS3(port);
    }
    expect(await objects()).toEqual(before);
    const again = await send(h);
    expect(again.page.status).toBe(303);
    expect(await counted()).toBe(messages + 1);
  });
});
