import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { recordingAudio } from '../src/media/extract-audio.ts';
import { openAiTranscriber } from '../src/media/openai-transcriber.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { startTranscriptWorker } from '../src/workers/transcripts.ts';
import { apiCall, apiMultipart, auth, call, type Harness, until } from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { engine, json } from './support/speech-engine.ts';

/*
 * Transcripts with a real recognizer (issue 43): sentences spoken by Debian's espeak-ng, made
 * into WebM recordings with ffmpeg, posted through the API; the stand-in engine behind the
 * transcription protocol decodes what the product sends it (ffmpeg, as whisper.cpp's server does
 * with --convert) and runs CMU pocketsphinx on it, with a grammar of a few distinct words (so its
 * tiny model tells the sentences apart). The words said are then in the transcript, the captions
 * and the inbox's search, and the other sentence's words are not. CI installs the packages.
 */

const run = promisify(execFile);
const TOOLS = ['/usr/bin/espeak-ng', '/usr/bin/ffmpeg', '/usr/bin/pocketsphinx_continuous'];
const MODEL = '/usr/share/pocketsphinx/model/en-us/en-us';
const missing = [...TOOLS, MODEL].filter((p) => !existsSync(p));
if (missing.length > 0) {
  console.warn(
    `transcripts-speech.test.ts: skipped: ${missing.join(', ')} not installed (Debian: espeak-ng, ffmpeg, pocketsphinx, pocketsphinx-en-us; CI installs them)`,
  );
}

const HOST = 'https://speech.example.com';
const TOKEN = 'speech-site-token-0123456789';
const GRAMMAR =
  '#JSGF V1.0;\ngrammar said;\npublic <said> = ( please | check | invoice | numbers | refund | tuesday | seven | hello )+ ;\n';

describe.skipIf(missing.length > 0)('transcripts by a real recognizer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'convo-test-speech-'));
  let site: PeopleSite;
  let h: Harness;
  let speech: Awaited<ReturnType<typeof engine>>;
  let worker: QueueWorker;
  let heard = 0;

  beforeAll(async () => {
    await writeFile(join(dir, 'said.jsgf'), GRAMMAR);
    speech = await engine((got, res) => {
      void recognize(got.file?.bytes ?? Buffer.alloc(0), got.file?.name ?? 'audio.bin').then(
        (segments) => json(res, 200, { language: 'en', text: segments.map((s) => s.text).join(' '), segments }),
        (err: Error) => json(res, 400, { error: { message: err.message } }),
      );
    });
    site = await openPeopleSite(
      {
        accounts: [
          {
            key: 'speech',
            name: 'Speech',
            host: HOST,
            owner: 'olive@speech.example',
            users: [{ email: 'olive@speech.example', name: 'Olive Owner' }],
            tokens: [{ name: 'tests', token: TOKEN }],
            conversations: [
              { title: 'Invoices', slug: 'invoices', messages: [] },
              { title: 'Refunds', slug: 'refunds', messages: [] },
            ],
          },
        ],
      },
      { services: { transcribing: true } },
    );
    h = site.h;
    worker = startTranscriptWorker(h.services.transcripts, {
      transcriber: openAiTranscriber({ url: speech.url, model: 'pocketsphinx', timeoutMs: 30_000 }),
      audio: recordingAudio({ store: h.services.media.store, dir: join(dir, 'audio'), maxBytes: 24 * 1024 * 1024 }),
      logger: createLogger('silent'),
      timeoutMs: 30_000,
      intervalMs: 50,
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await speech?.close();
    await site?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** What pocketsphinx hears in a file of audio: the utterances, with their words' times. */
  async function recognize(bytes: Buffer, name: string) {
    heard += 1;
    const input = join(dir, `heard-${heard}-${name}`);
    const wav = join(dir, `heard-${heard}.wav`);
    await writeFile(input, bytes);
    await run('ffmpeg', ['-loglevel', 'error', '-y', '-i', input, '-ar', '16000', '-ac', '1', '-f', 'wav', wav]);
    const { stdout } = await run('pocketsphinx_continuous', [
      '-infile',
      wav,
      '-jsgf',
      join(dir, 'said.jsgf'),
      '-time',
      'yes',
      '-logfn',
      '/dev/null',
    ]);
    // `-time yes` prints each utterance's words as "word start end confidence".
    const words = stdout
      .split('\n')
      .map((line) => /^([a-z]+)(?:\(\d+\))? ([\d.]+) ([\d.]+) /.exec(line))
      .filter((m) => m !== null)
      .map((m) => ({ text: m[1] as string, start: Number(m[2]), end: Number(m[3]) }));
    if (words.length === 0) return [];
    return [
      {
        start: words[0]?.start ?? 0,
        end: words.at(-1)?.end ?? 0,
        text: words.map((w) => w.text).join(' '),
      },
    ];
  }

  /** A sentence spoken into a WebM recording (Opus), as a browser's recorder would send it. */
  async function spoken(sentence: string, file: string): Promise<Uint8Array> {
    const wav = join(dir, `${file}.wav`);
    const webm = join(dir, `${file}.webm`);
    await run('espeak-ng', ['-v', 'en+m1', '-s', '150', '-w', wav, sentence]);
    await run('ffmpeg', ['-loglevel', 'error', '-y', '-i', wav, '-c:a', 'libopus', '-b:a', '48k', '-f', 'webm', webm]);
    return new Uint8Array(await readFile(webm));
  }

  async function post(slug: string, bytes: Uint8Array) {
    const conversation = await apiCall(h, 'GET', `/conversations/get_conversation?slug=${slug}`, auth(TOKEN));
    const posted = await apiMultipart(
      h,
      'POST',
      '/messages/create_message',
      auth(TOKEN),
      { conversation_id: String(conversation.body.id) },
      { name: `${slug}.webm`, type: 'audio/webm', bytes },
    );
    expect(posted.status).toBe(201);
    return posted.body.id as number;
  }

  const transcriptOf = async (id: number) => {
    const page = await apiCall(h, 'GET', '/messages/get_messages?limit=100', auth(TOKEN));
    return (
      page.body.messages as {
        id: number;
        transcript: { status: string; text: string | null; captions_url: string | null };
      }[]
    ).find((m) => m.id === id)?.transcript;
  };

  it('hears the words said: in the transcript, the captions and the inbox search', async () => {
    const invoice = await post('invoices', await spoken('please check the invoice numbers', 'invoice'));
    const refund = await post('refunds', await spoken('hello, the refund is due on tuesday', 'refund'));
    await until(
      async () =>
        (await transcriptOf(invoice))?.status === 'complete' && (await transcriptOf(refund))?.status === 'complete',
      30_000,
    );
    const first = await transcriptOf(invoice);
    const second = await transcriptOf(refund);
    expect(first?.text).toMatch(/\bplease\b.*\binvoice\b/);
    expect(first?.text).not.toMatch(/\brefund\b/);
    expect(second?.text).toMatch(/\brefund\b.*\btuesday\b/);
    expect(second?.text).not.toMatch(/\binvoice\b/);
    const captions = await call(h, new Request(first?.captions_url ?? '', { headers: auth(TOKEN) }));
    expect(captions.status).toBe(200);
    expect(captions.body).toMatch(/^WEBVTT\n\n00:00:0\d\.\d{3} --> 00:00:0\d\.\d{3}\n.*invoice/);
    const owner = await signIn(site, HOST, 'olive@speech.example');
    const found = await owner.get('/?q=invoice');
    expect(found.html).toContain('href="/c/invoices"');
    expect(found.html).not.toContain('href="/c/refunds"');
    expect((await owner.get('/?q=tuesday')).html).toContain('href="/c/refunds"');
  });
});
