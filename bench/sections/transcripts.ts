import { randomBytes } from 'node:crypto';
import { copyFileSync, linkSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  ALL_FORMATS,
  BufferSource,
  EncodedAudioPacketSource,
  EncodedPacket,
  EncodedPacketSink,
  EncodedVideoPacketSource,
  FilePathTarget,
  Input,
  Output,
  WebMOutputFormat,
} from 'mediabunny';
import pg from 'pg';
import { drive, fmt, median, SCENARIOS } from '../load.ts';
import { CONNECTIONS, DB, DURATION, ROOT } from '../options.ts';
import { peakRssMb, resetPeak, rssMb, start, startOptions, stopServer } from '../servers.ts';
import { aim } from '../targets.ts';
import { BENCH_MEDIA_DIR } from './media.ts';

const MB = 1024 * 1024;
/** Recordings transcribed while the API is measured, each round. */
const RECORDINGS = 100;
/** How long the stand-in engine takes for one file: the job is busy for the whole measurement. */
const ENGINE_MS = 150;
const LARGE = 8;
const LARGE_MB = 200;

/**
 * Transcripts (issue 43), on a product whose TRANSCRIBE_URL names a stand-in engine in this
 * process (OpenAI's protocol; it reads each file and answers a segment after ENGINE_MS):
 * - the API's rows (get_conversation ?slug, create_conversation) while RECORDINGS recordings (the
 *   3 s WebM fixture) are being transcribed, against the same rows with none, rounds alternated
 *   (target: >= 0.9x);
 * - the product's RSS while it extracts the audio of LARGE recordings of LARGE_MB MB each (ten-minute
 *   WebMs, video packets of noise around the fixture's Opus audio), against its RSS at rest
 *   (target: within 30 MB).
 */
export async function transcripts() {
  const engine = await standInEngine();
  const product = await start('product, transcribing', 'apps/api/src/entry/node.ts', 3309, startOptions(), {
    MEDIA_DIR: BENCH_MEDIA_DIR,
    TRANSCRIBE_URL: `${engine.url}/v1`,
    TRANSCRIBE_MODEL: 'bench',
    TRANSCRIBE_MAX_BYTES: String(24 * MB),
  });
  try {
    // Recordings other sections left waiting (none of them real) are settled first.
    await settled(null, 120_000);
    const fixture = join(ROOT, 'apps/api/test/fixtures/media/video-3s.webm');
    const rows: string[] = [];
    let worst = Number.POSITIVE_INFINITY;
    for (const scenario of ['get_conversation ?slug', 'create_conversation']) {
      const s = SCENARIOS.find((x) => x.name === scenario);
      if (!s) throw new Error(`the comparison has no ${scenario} scenario`);
      const c = Math.min(...CONNECTIONS);
      const during: number[] = [];
      const alone: number[] = [];
      // The process was just started: a run unmeasured first, so neither side reads its warm-up.
      await drive(product, s, c, Math.min(2, DURATION));
      for (let round = 0; round < 2; round++) {
        const transcribing = async () => {
          const keys = await plant(fixture, RECORDINGS);
          const busy = await drive(product, s, c, DURATION);
          const left = await pending(keys);
          await settled(keys, 120_000);
          return { rps: busy.rps, done: RECORDINGS - left };
        };
        const without = async () => (await drive(product, s, c, DURATION)).rps;
        // The order turned each round.
        const [busy, rps] =
          round === 0
            ? [await transcribing(), await without()]
            : await without().then(async (rps) => [await transcribing(), rps] as const);
        during.push(busy.rps);
        alone.push(rps);
        rows.push(
          `${scenario}, round ${round + 1}: ${fmt(busy.rps)} req/s while transcribing (${busy.done} of ${RECORDINGS} done meanwhile), ${fmt(rps)} req/s without`,
        );
      }
      const ratio = median(during) / median(alone);
      worst = Math.min(worst, ratio);
      rows.push(`${scenario}: x${ratio.toFixed(2)} while transcribing`);
    }
    console.log(
      `\nthe API while ${RECORDINGS} recordings are transcribed (engine ${ENGINE_MS} ms a file):\n${rows.join('\n')}`,
    );
    aim(`API rows while transcribing >= 0.90x`, `lowest x${worst.toFixed(2)}`, worst >= 0.9);

    // Extracting the audio of eight large recordings, one after another, as the job does.
    mkdirSync(BENCH_MEDIA_DIR, { recursive: true });
    const large = join(BENCH_MEDIA_DIR, 'bench-large.webm');
    await writeLargeWebm(large, LARGE_MB * MB);
    const idleMb = Math.round(rssMb(product));
    resetPeak(product);
    const started = performance.now();
    const keys = await plant(large, LARGE, true);
    await settled(keys, 600_000);
    const seconds = (performance.now() - started) / 1000;
    const peakMb = peakRssMb(product);
    const failed = await failures(keys);
    console.log(
      `audio of ${LARGE} recordings of ${Math.round(statSync(large).size / MB)} MB extracted and sent: ${seconds.toFixed(1)} s, ` +
        `RSS idle ${idleMb} MB, peak ${peakMb} MB (+${peakMb - idleMb} MB); engine received ${fmt(engine.bytes / MB)} MB` +
        `${failed.length > 0 ? `; failed: ${failed.join('; ')}` : ''}`,
    );
    aim(
      `extracting ${LARGE} x ${LARGE_MB} MB: RSS within 30 MB of idle`,
      `+${peakMb - idleMb} MB`,
      peakMb - idleMb <= 30 && failed.length === 0,
    );
    rmSync(large, { force: true });
  } finally {
    await stopServer(product);
    engine.close();
  }
}

/** The stand-in engine: reads each request whole, answers one segment after ENGINE_MS. */
async function standInEngine() {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      setTimeout(() => {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ language: 'en', text: 'a bench', segments: [{ start: 0, end: 1, text: 'a bench' }] }));
      }, ENGINE_MS);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get bytes() {
      return bytes;
    },
    close: () => server.close(),
  };
}

/** `n` recorded messages (of the bench account's first conversation) of the file at `source`; their keys. */
async function plant(source: string, n: number, link = false): Promise<string[]> {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  try {
    const { rows } = await db.query<{ account_id: number; id: number }>(
      `select c.account_id, c.id from conversation c order by c.id limit 1`,
    );
    const target = rows[0];
    if (!target) throw new Error('no conversation: load the bench data first');
    mkdirSync(join(BENCH_MEDIA_DIR, String(target.account_id)), { recursive: true });
    const size = statSync(source).size;
    const keys = Array.from({ length: n }, () => `${target.account_id}/${randomBytes(16).toString('hex')}`);
    for (const key of keys) (link ? linkSync : copyFileSync)(source, join(BENCH_MEDIA_DIR, key));
    await db.query(
      `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, anonymous, text,
                            media_key, media_content_type, media_bytes)
       select $1, $2, 'video', 3, true, '', k, 'video/webm', $3 from unnest($4::text[]) as k`,
      [target.account_id, target.id, size, keys],
    );
    return keys;
  } finally {
    await db.end();
  }
}

async function query<T extends pg.QueryResultRow>(text: string, params: unknown[]): Promise<T[]> {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  try {
    return (await db.query<T>(text, params)).rows;
  } finally {
    await db.end();
  }
}

/** How many of `keys` (null: all) are still pending. */
const pending = async (keys: string[] | null) =>
  Number(
    (
      await query<{ n: number }>(
        `select count(*)::int as n from transcript where status = 'pending' and ($1::text[] is null or media_key = any($1))`,
        [keys],
      )
    )[0]?.n,
  );

async function settled(keys: string[] | null, ms: number) {
  const deadline = Date.now() + ms;
  while ((await pending(keys)) > 0) {
    if (Date.now() > deadline) throw new Error('the transcripts did not settle in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}

const failures = async (keys: string[]) =>
  (
    await query<{ reason: string }>(
      `select coalesce(reason, status) as reason from transcript where status <> 'complete' and media_key = any($1)`,
      [keys],
    )
  ).map((r) => r.reason);

/**
 * A WebM of about `bytes` as a recorder writes one over ten minutes (appended, no cues): video
 * packets of noise at 30 a second (about 333 KB a second for 200 MB; the extraction discards
 * them), and the fixture's Opus audio repeated under them.
 */
export async function writeLargeWebm(path: string, bytes: number) {
  const fixture = readFileSync(join(ROOT, 'apps/api/test/fixtures/media/video-3s.webm'));
  const input = new Input({ formats: ALL_FORMATS, source: new BufferSource(fixture) });
  const video = await input.getPrimaryVideoTrack();
  const audio = await input.getPrimaryAudioTrack();
  if (!video || !audio) throw new Error('the fixture has no video or no audio track');
  const output = new Output({ format: new WebMOutputFormat({ appendOnly: true }), target: new FilePathTarget(path) });
  const videoOut = new EncodedVideoPacketSource(video.codec ?? 'vp8');
  const audioOut = new EncodedAudioPacketSource(audio.codec ?? 'opus');
  output.addVideoTrack(videoOut);
  output.addAudioTrack(audioOut);
  await output.start();
  const audioPackets = [];
  for await (const p of new EncodedPacketSink(audio).packets()) audioPackets.push(p);
  const videoConfig = { decoderConfig: (await video.getDecoderConfig()) ?? undefined };
  const audioConfig = { decoderConfig: (await audio.getDecoderConfig()) ?? undefined };
  const fps = 30;
  const seconds = 600;
  const frame = Math.ceil(bytes / (fps * seconds));
  const noise = randomBytes(frame);
  const span = 3.1;
  for (let i = 0, audioRound = 0; i < fps * seconds; i++) {
    const at = i / fps;
    // The audio of each 3.1 s span, before the video frames it covers.
    while (audioRound * span <= at) {
      for (const p of audioPackets) {
        await audioOut.add(
          p.clone({ timestamp: p.timestamp + audioRound * span }),
          audioRound === 0 ? audioConfig : undefined,
        );
      }
      audioRound++;
    }
    await videoOut.add(
      new EncodedPacket(noise, i % (fps * 2) === 0 ? 'key' : 'delta', at, 1 / fps),
      i === 0 ? videoConfig : undefined,
    );
  }
  await output.finalize();
  input.dispose();
}
