import { mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TranscriptionFailed } from '@convo/domain';
import { ALL_FORMATS, EncodedPacketSink, FilePathSource, Input } from 'mediabunny';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractAudio, removePieces, WINDOW_OVERLAP_SECONDS } from '../src/media/extract-audio.ts';
import { openAiTranscriber } from '../src/media/openai-transcriber.ts';
import { Unreadable, webmAudioBlocks } from '../src/media/webm-audio.ts';
import { engine, json } from './support/speech-engine.ts';

/*
 * The OpenAI-compatible Transcriber against a stand-in engine on 127.0.0.1 that speaks the
 * protocol (support/speech-engine.ts): what the product sends, and how it reads each answer an
 * engine may give; and the audio file it sends, as extracted from a recording.
 */

const AUDIO = { file: new Blob([Buffer.from('OggS fake audio')], { type: 'audio/ogg' }), name: 'message-7.ogg' };

/** The refusal a transcribe call ends in. */
async function failure(p: Promise<unknown>): Promise<TranscriptionFailed> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof TranscriptionFailed)) throw new Error(`expected a TranscriptionFailed, got ${String(err)}`);
  return err;
}

let ok: Awaited<ReturnType<typeof engine>>;

beforeAll(async () => {
  ok = await engine((_got, res) =>
    json(res, 200, {
      task: 'transcribe',
      language: 'English',
      duration: 4.2,
      text: ' Hello there. Please call me back. ',
      segments: [
        { id: 0, start: 0, end: 1.5, text: ' Hello there.', avg_logprob: -0.2 },
        { id: 1, start: 1.5, end: 4.2, text: ' Please call me back.' },
        { id: 2, start: 4.2, end: 4.2, text: '  ' },
      ],
    }),
  );
});
afterAll(async () => {
  await ok?.close();
});

describe('the OpenAI-compatible transcriber', () => {
  it('sends the audio, the model, verbose_json, the language and the key; reads the segments', async () => {
    const transcriber = openAiTranscriber({
      url: ok.url,
      model: 'whisper-1',
      apiKey: 'sk-test',
      language: 'en',
      timeoutMs: 5_000,
    });
    const transcript = await transcriber.transcribe(AUDIO);
    expect(transcript).toEqual({
      language: 'english',
      text: 'Hello there. Please call me back.',
      segments: [
        { start: 0, end: 1.5, text: 'Hello there.' },
        { start: 1.5, end: 4.2, text: 'Please call me back.' },
      ],
    });
    const [got] = ok.received;
    expect(got?.path).toBe('/v1/audio/transcriptions');
    expect(got?.authorization).toBe('Bearer sk-test');
    expect(got?.fields).toEqual({
      model: 'whisper-1',
      response_format: 'verbose_json',
      'timestamp_granularities[]': 'segment',
      language: 'en',
    });
    expect(got?.file).toEqual({ name: 'message-7.ogg', type: 'audio/ogg', bytes: Buffer.from('OggS fake audio') });
  });

  it('sends no key and no language unless set, to a base given with its slash', async () => {
    const before = ok.received.length;
    const transcript = await openAiTranscriber({ url: `${ok.url}/`, model: 'small', timeoutMs: 5_000 }).transcribe(
      AUDIO,
    );
    expect(transcript.segments).toHaveLength(2);
    const got = ok.received[before];
    expect(got?.path).toBe('/v1/audio/transcriptions');
    expect(got?.authorization).toBeUndefined();
    expect(got?.fields.language).toBeUndefined();
  });

  it('takes text without segments, and segments without text', async () => {
    const answers = [
      { text: 'Just text.' },
      {
        segments: [
          { start: 0, end: 1, text: 'Only ' },
          { start: 1, end: 2, text: 'segments' },
        ],
      },
    ];
    const e = await engine((_got, res) => json(res, 200, answers.shift()));
    try {
      const t = openAiTranscriber({ url: e.url, model: 'm', timeoutMs: 5_000 });
      expect(await t.transcribe(AUDIO)).toEqual({ language: null, text: 'Just text.', segments: [] });
      expect((await t.transcribe(AUDIO)).text).toBe('Only segments');
    } finally {
      await e.close();
    }
  });

  it('says why an engine refused, and whether trying again may help', async () => {
    const answers: [number, string][] = [
      [400, JSON.stringify({ error: { message: 'model "nope" not found', type: 'invalid_request_error' } })],
      [401, 'bad key\r\n\u0000'],
      [429, JSON.stringify({ error: 'busy' })],
      [503, ''],
      [200, 'not json'],
      [200, JSON.stringify({ segments: 'no' })],
    ];
    const e = await engine((_got, res) => {
      const [status, body] = answers.shift() ?? [500, ''];
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    try {
      const t = openAiTranscriber({ url: e.url, model: 'nope', timeoutMs: 5_000 });
      const said = [];
      for (let i = 0; i < 6; i++) {
        const f = await failure(t.transcribe(AUDIO));
        said.push([f.message, f.retryable]);
      }
      expect(said).toEqual([
        ['the speech engine answered 400: model "nope" not found', false],
        ['the speech engine answered 401: bad key', false],
        ['the speech engine answered 429: busy', true],
        ['the speech engine answered 503', true],
        ['the speech engine answered something that is not JSON', false],
        ['the speech engine answered JSON that is not a transcript', false],
      ]);
    } finally {
      await e.close();
    }
  });

  it('follows no redirect: the audio goes to the configured address only', async () => {
    const elsewhere = await engine((_got, res) => json(res, 200, { text: 'stolen' }));
    const redirecting = await engine((_got, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/audio/transcriptions` }).end();
    });
    try {
      const f = await failure(
        openAiTranscriber({ url: redirecting.url, model: 'm', timeoutMs: 5_000 }).transcribe(AUDIO),
      );
      expect([f.message, f.retryable]).toEqual([
        'the speech engine answered 307, a redirect, which is not followed: set TRANSCRIBE_URL to where it points',
        false,
      ]);
      expect(elsewhere.received).toEqual([]);
    } finally {
      await redirecting.close();
      await elsewhere.close();
    }
  });

  it('gives up on an engine that does not answer in time, or is not there, as worth another try', async () => {
    const silent = await engine(() => undefined);
    try {
      const started = Date.now();
      const f = await failure(openAiTranscriber({ url: silent.url, model: 'm', timeoutMs: 300 }).transcribe(AUDIO));
      expect([f.message, f.retryable]).toEqual(['the speech engine did not answer within 0.3 s', true]);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await silent.close();
    }
    const gone = await engine(() => undefined);
    await gone.close();
    const f = await failure(openAiTranscriber({ url: gone.url, model: 'm', timeoutMs: 2_000 }).transcribe(AUDIO));
    expect([f.message, f.retryable]).toEqual(['the speech engine could not be reached (ECONNREFUSED)', true]);
  });
});

describe('the audio sent, cut into windows past the limit', () => {
  /** A WAV of `seconds` of a 440 Hz tone, 8 kHz mono 16-bit: 16,000 bytes a second. */
  const wav = (seconds: number) => {
    const samples = seconds * 8000;
    const b = Buffer.alloc(44 + samples * 2);
    b.write('RIFF', 0);
    b.writeUInt32LE(36 + samples * 2, 4);
    b.write('WAVEfmt ', 8);
    b.writeUInt32LE(16, 16);
    b.writeUInt16LE(1, 20);
    b.writeUInt16LE(1, 22);
    b.writeUInt32LE(8000, 24);
    b.writeUInt32LE(16000, 28);
    b.writeUInt16LE(2, 32);
    b.writeUInt16LE(16, 34);
    b.write('data', 36);
    b.writeUInt32LE(samples * 2, 40);
    for (let i = 0; i < samples; i++)
      b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)), 44 + i * 2);
    return new Uint8Array(b);
  };

  it('writes overlapping windows, each under the limit, that cover the recording, and removes them after', async () => {
    const bytes = wav(60);
    const dir = await mkdtemp(join(tmpdir(), 'convo-test-windows-'));
    try {
      const read = async (start: number, end: number) => bytes.slice(start, end);
      const extracted = await extractAudio(bytes.length, read, dir, 'long', 300_000);
      if (!extracted.ok) throw new Error(`no audio extracted: ${JSON.stringify(extracted)}`);
      const pieces = extracted.pieces;
      // Windows of 16 s every 14 s, each from the packet that starts at or just before its start.
      expect(pieces.map((p) => [p.name, p.overlapSeconds])).toEqual([
        ['audio-0.wav', 0],
        ['audio-1.wav', WINDOW_OVERLAP_SECONDS],
        ['audio-2.wav', WINDOW_OVERLAP_SECONDS],
        ['audio-3.wav', WINDOW_OVERLAP_SECONDS],
        ['audio-4.wav', WINDOW_OVERLAP_SECONDS],
      ]);
      pieces.forEach((p, n) => {
        expect(p.offsetSeconds).toBeLessThanOrEqual(n * 14);
        expect(p.offsetSeconds).toBeGreaterThan(n * 14 - 0.5);
      });
      for (const p of pieces) expect((await stat(p.path)).size).toBeLessThanOrEqual(300_000);
      // The last window reaches the end: from 56 s (or a packet before) to 60 s, 16,000 bytes a second.
      expect((await stat(pieces[4]?.path ?? '')).size).toBeGreaterThanOrEqual(4 * 16_000);
      await removePieces(pieces);
      expect(await readdir(dir)).toEqual([]);
      // Under the limit it is one file, as it came.
      const whole = await extractAudio(bytes.length, read, dir, 'whole', 2_000_000);
      expect(whole.ok && whole.pieces.map((p) => [p.name, p.offsetSeconds])).toEqual([['audio.wav', 0]]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a WebM's audio, read out of its file without its video", () => {
  const fixture = (name: string) => join(import.meta.dirname, 'fixtures/media', name);

  /** The primary audio track's packets of a file, as mediabunny's demuxer reads them. */
  async function packetsOf(path: string) {
    const input = new Input({ formats: ALL_FORMATS, source: new FilePathSource(path) });
    try {
      const track = await input.getPrimaryAudioTrack();
      if (!track) throw new Error(`${path} has no audio`);
      const packets: { timestamp: number; data: string }[] = [];
      for await (const p of new EncodedPacketSink(track).packets()) {
        packets.push({ timestamp: Math.round(p.timestamp * 1e6), data: Buffer.from(p.data).toString('base64') });
      }
      return { id: track.id, packets };
    } finally {
      input.dispose();
    }
  }

  it('finds the blocks the demuxer finds, byte for byte and at the same times', async () => {
    for (const name of ['video-3s.webm', 'audio-3s.webm']) {
      const path = fixture(name);
      const theirs = await packetsOf(path);
      const file = await open(path, 'r');
      try {
        const ours = [];
        const readInto = async (into: Uint8Array, at: number) => (await file.read(into, 0, into.length, at)).bytesRead;
        for await (const b of webmAudioBlocks(readInto, (await stat(path)).size, theirs.id)) {
          ours.push({ timestamp: Math.round(b.timestamp * 1e6), data: Buffer.from(b.data).toString('base64') });
        }
        expect(ours.length).toBeGreaterThan(100);
        expect(ours).toEqual(theirs.packets);
      } finally {
        await file.close();
      }
    }
  });

  it('reads a damaged recording to its end or steps back, whatever its bytes say', async () => {
    const whole = new Uint8Array(await readFile(fixture('video-3s.webm')));
    // The same damage each run: a small linear congruential sequence picks the bytes.
    let seed = 43;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let round = 0; round < 300; round++) {
      const bytes = whole.slice();
      for (let n = 0; n < 1 + (round % 8); n++) bytes[next() % bytes.length] = next() % 256;
      const readInto = async (into: Uint8Array, at: number) => {
        const part = bytes.subarray(at, at + into.length);
        into.set(part);
        return part.length;
      };
      let blocks = 0;
      try {
        for await (const b of webmAudioBlocks(readInto, bytes.length, 2)) {
          expect(Number.isFinite(b.timestamp)).toBe(true);
          blocks++;
        }
      } catch (err) {
        if (!(err instanceof Unreadable)) throw err;
      }
      expect(blocks).toBeLessThanOrEqual(bytes.length);
    }
  });

  it('writes the audio file the demuxer writes, and steps back to the demuxer for a file it does not read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convo-test-webm-'));
    try {
      const whole = await readFile(fixture('video-3s.webm'));
      // Cut off in the middle of a block: the reader refuses it, the demuxer reads what is there.
      await writeFile(join(dir, 'cut.webm'), whole.subarray(0, Math.floor(whole.length * 0.6)));
      const demuxerOnly = async () => {
        throw new Unreadable('read with the demuxer');
      };
      for (const path of [fixture('video-3s.webm'), fixture('audio-3s.webm'), join(dir, 'cut.webm')]) {
        const bytes = new Uint8Array(await readFile(path));
        const read = async (start: number, end: number) => bytes.slice(start, end);
        let reads = 0;
        const readInto = async (into: Uint8Array, at: number) => {
          reads++;
          const part = bytes.subarray(at, at + into.length);
          into.set(part);
          return part.length;
        };
        const ours = await extractAudio(bytes.length, read, dir, 'ours', 2_000_000, readInto);
        // The reader read the file (and, for the cut one, stepped back after).
        expect(reads).toBeGreaterThan(0);
        const theirs = await extractAudio(bytes.length, read, dir, 'theirs', 2_000_000, demuxerOnly);
        if (!ours.ok || !theirs.ok) throw new Error(`no audio from ${path}`);
        expect(ours.pieces.map((p) => p.name)).toEqual(['audio.ogg']);
        const sent = (await packetsOf(ours.pieces[0]?.path ?? '')).packets;
        expect(sent).toEqual((await packetsOf(theirs.pieces[0]?.path ?? '')).packets);
        // Every packet of the recording's audio, as it was recorded.
        expect(sent.map((p) => p.data)).toEqual((await packetsOf(path)).packets.map((p) => p.data));
        await removePieces([...ours.pieces, ...theirs.pieces]);
      }
      expect(await readdir(dir)).toEqual(['cut.webm']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
