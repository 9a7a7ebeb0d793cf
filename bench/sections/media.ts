import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get as httpGet, request as httpRequest } from 'node:http';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  ALL_FORMATS,
  BufferSource,
  EncodedAudioPacketSource,
  EncodedPacketSink,
  EncodedVideoPacketSource,
  FilePathTarget,
  Input,
  Output,
  WebMOutputFormat,
} from 'mediabunny';
import pg from 'pg';
import { DiskMediaStore } from '../../apps/api/src/media/disk-store.ts';
import { MediabunnyProbe } from '../../apps/api/src/media/probe.ts';
import { nginxMain } from '../../chaos/support/nginx.ts';
import { fmt, median } from '../load.ts';
import { CONNECTIONS, DB, DURATION, PAGE_HOST, ROOT } from '../options.ts';
import { peakRssMb, resetPeak, rssMb, type Server, start, startOptions, stopServer } from '../servers.ts';
import { aim } from '../targets.ts';

/** Where the product keeps recordings during the bench (its MEDIA_DIR). */
export const BENCH_MEDIA_DIR = join(tmpdir(), 'convo-bench-media');

const MB = 1024 * 1024;
const DOWNLOAD_MB = 100;
/** Rounds of the three downloads (nginx, handed to nginx, sent by the product). */
const DOWNLOAD_ROUNDS = 3;
const UPLOADS = 8;
const UPLOAD_MB = 200;

/**
 * Recorded messages (product only, against nginx where there is one to compare):
 * - a 100 MB recording downloaded at 32 connections: from nginx serving the file, from the
 *   product behind that nginx handing the bytes to it (MEDIA_ACCEL_REDIRECT), and from the product
 *   sending them itself, alternated in one run (targets: handed >= 1.0x nginx; sent by the
 *   product, RSS within 50 MB of its idle);
 * - 8 concurrent 200 MB uploads through the reply form, the server's RSS sampled meanwhile (target:
 *   within 60 MB of its RSS before them);
 * - probing a one-hour WebM written as MediaRecorder writes one (no duration, no cues) (target: < 2 s).
 */
export async function media(product: Server) {
  const recording = await plantRecording(DOWNLOAD_MB);
  const rows: string[] = [];
  const connections = Math.min(...CONNECTIONS);
  const direct = { url: `${product.base}${recording.urlPath}`, host: PAGE_HOST };
  const handing = await start(
    'product, handing recordings to nginx',
    'apps/api/src/entry/node.ts',
    3307,
    startOptions(),
    {
      MEDIA_DIR: BENCH_MEDIA_DIR,
      MEDIA_ACCEL_REDIRECT: '/internal/media/',
    },
  );
  const nginx = await startNginx(recording.path, handing).catch(() => null);
  let handedRatio = Number.NaN;
  // The product sending the bytes itself: its RSS at rest, and its peak while they go.
  const idleMb = Math.round(rssMb(product));
  resetPeak(product);
  if (nginx) {
    const handed = { url: `${nginx.url}${recording.urlPath}`, host: PAGE_HOST };
    // Rounds of the three, the order turned each round, compared by medians: the machine's drift
    // falls on all three alike.
    const runs = { nginx: [] as number[], handed: [] as number[], sent: [] as number[], errors: 0 };
    const ways = [
      async () => runs.nginx.push((await download(`${nginx.url}/file`, undefined, connections)).mbps),
      async () => {
        const d = await download(handed.url, handed.host, connections);
        runs.handed.push(d.mbps);
        runs.errors += d.errors;
      },
      async () => {
        const d = await download(direct.url, direct.host, connections);
        runs.sent.push(d.mbps);
        runs.errors += d.errors;
      },
    ];
    for (let round = 0; round < DOWNLOAD_ROUNDS; round++) {
      for (let i = 0; i < ways.length; i++) await ways[(i + round) % ways.length]?.();
    }
    nginx.stop();
    const theirs = median(runs.nginx);
    const throughNginx = median(runs.handed);
    const ours = median(runs.sent);
    handedRatio = throughNginx / theirs;
    rows.push(
      `download of a ${DOWNLOAD_MB} MB recording, ${connections} conns: nginx ${fmt(theirs)} MB/s; product handing it to nginx ${fmt(throughNginx)} MB/s, x${handedRatio.toFixed(2)}; product sending it ${fmt(ours)} MB/s, x${(ours / theirs).toFixed(2)} (medians of ${DOWNLOAD_ROUNDS} rounds; ${runs.errors} errors)`,
    );
  } else {
    await download(direct.url, direct.host, connections);
    rows.push(
      'download: nginx is not installed here (apt-get install nginx-light), so there is nothing to compare with',
    );
  }
  const sendingMb = peakRssMb(product);
  rows.push(`the product sending it: RSS idle ${idleMb} MB, peak ${sendingMb} MB (+${sendingMb - idleMb} MB)`);
  await stopServer(handing);

  const resumable = await uploadMany(product, tusUpload);
  rows.push(
    `${UPLOADS} concurrent ${UPLOAD_MB} MB uploads (tus): ${resumable.seconds.toFixed(1)} s, RSS idle ${resumable.idleMb} MB, peak ${resumable.peakMb} MB (+${resumable.peakMb - resumable.idleMb} MB); answers ${resumable.statuses.join(' ')}`,
  );
  const uploads = await uploadMany(product, postUpload);
  rows.push(
    `${UPLOADS} concurrent ${UPLOAD_MB} MB uploads (reply form): ${uploads.seconds.toFixed(1)} s, RSS idle ${uploads.idleMb} MB, peak ${uploads.peakMb} MB (+${uploads.peakMb - uploads.idleMb} MB); answers ${uploads.statuses.join(' ')}`,
  );

  // Hostile recordings (red team round 3): a crafted M4A whose moov holds 200 MB, and posts without
  // their form's token. What the server holds while they arrive.
  const crafted = await uploadMany(product, postCrafted, 1);
  rows.push(
    `a ${UPLOAD_MB} MB M4A whose moov holds it all (reply form): RSS idle ${crafted.idleMb} MB, peak ${crafted.peakMb} MB (+${crafted.peakMb - crafted.idleMb} MB); answer ${crafted.statuses.join(' ')}`,
  );
  const tokenless = await uploadMany(product, (p, path, form) => postUpload(p, path, { ...form, csrf: 'forged' }));
  rows.push(
    `${UPLOADS} concurrent ${UPLOAD_MB} MB posts without their form's token: media kept on disk at most ${fmt(tokenless.diskPeakMb)} MB; answers ${tokenless.statuses.join(' ')}`,
  );

  const probe = await probeHour();
  rows.push(
    `probing a one-hour WebM (${probe.mb} MB, no duration or cues): ${probe.ms.toFixed(0)} ms, measured ${probe.seconds.toFixed(1)} s`,
  );

  console.log(`\nrecorded messages (product; nginx for the download):\n${rows.join('\n')}`);
  if (nginx)
    aim(
      'recording download handed to nginx >= 1.0x nginx, same file',
      `x${handedRatio.toFixed(2)}`,
      handedRatio >= 1.0,
    );
  aim(
    `${connections} downloads sent by the product: RSS within 50 MB of idle`,
    `+${sendingMb - idleMb} MB`,
    sendingMb - idleMb <= 50,
  );
  for (const [how, run] of [
    ['reply form', uploads],
    ['tus', resumable],
  ] as const) {
    aim(
      `${UPLOADS} x ${UPLOAD_MB} MB uploads (${how}): RSS within 60 MB of idle`,
      `+${run.peakMb - run.idleMb} MB`,
      run.peakMb - run.idleMb <= 60,
    );
  }
  aim(
    `a ${UPLOAD_MB} MB moov M4A: RSS within 60 MB of idle`,
    `+${crafted.peakMb - crafted.idleMb} MB`,
    crafted.peakMb - crafted.idleMb <= 60,
  );
  aim(
    `${UPLOADS} tokenless ${UPLOAD_MB} MB posts: < 1 MB kept on disk`,
    `${fmt(tokenless.diskPeakMb)} MB`,
    tokenless.diskPeakMb < 1,
  );
  aim('probing a one-hour WebM < 2 s', `${probe.ms.toFixed(0)} ms`, probe.ms < 2000);
}

/** A recording of `mb` MB kept for a message of the page account's conversation, as a reply would. */
async function plantRecording(mb: number): Promise<{ path: string; urlPath: string }> {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  try {
    const { rows } = await db.query<{ account_id: number; id: number; key: string }>(
      `select c.account_id, c.id, a.key from conversation c join account a on a.id = c.account_id
       where a.host like $1 order by c.id limit 1`,
      [`%${PAGE_HOST}`],
    );
    const target = rows[0];
    if (!target) throw new Error('the page account has no conversation: load the bench data first');
    const key = `${target.account_id}/${randomBytes(16).toString('hex')}`;
    const path = join(BENCH_MEDIA_DIR, key);
    mkdirSync(join(BENCH_MEDIA_DIR, String(target.account_id)), { recursive: true });
    // Kept as the server keeps recordings, for its own user (nginx's workers run as that user).
    writeFileSync(path, randomBytes(mb * MB), { mode: 0o600 });
    const inserted = await db.query<{ id: number }>(
      `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, anonymous, text,
                            media_key, media_content_type, media_bytes)
       values ($1, $2, 'video', 600, true, '', $3, 'video/webm', $4) returning id`,
      [target.account_id, target.id, key, mb * MB],
    );
    return { path, urlPath: `/media/${target.key}/${inserted.rows[0]?.id}` };
  } finally {
    await db.end();
  }
}

/**
 * nginx serving one file at /file, as it would serve recordings from a directory, and in front of
 * `handing`, whose recordings it sends from BENCH_MEDIA_DIR when told to (as docs/operating.md
 * sets it up).
 */
async function startNginx(file: string, handing: Server): Promise<{ url: string; stop(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'convo-bench-nginx-'));
  const port = 3399;
  writeFileSync(
    join(dir, 'nginx.conf'),
    `user ${userInfo().username};\n${nginxMain(
      dir,
      1024,
      `default_type video/webm;
  sendfile on;
  upstream handing {
    server ${new URL(handing.base).host};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location = /file { alias ${file}; }
    location /internal/media/ {
      internal;
      alias ${BENCH_MEDIA_DIR}/;
    }
    location / {
      proxy_pass http://handing;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
    }
  }`,
    )}`,
  );
  const child = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' });
  const failed = new Promise<never>((_, reject) => child.once('error', reject));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    const ok = await Promise.race([
      fetch(`${url}/file`, { method: 'HEAD' }).then(
        (r) => r.ok,
        () => false,
      ),
      failed,
    ]);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop() {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `connections` clients each downloading the file again and again for DURATION seconds; every byte
 * received counts (a download cut off at the end too): throughput, not whole answers.
 */
async function download(url: string, host: string | undefined, connections: number) {
  const deadline = Date.now() + DURATION * 1000;
  let bytes = 0;
  let errors = 0;
  const once = () =>
    new Promise<void>((resolve) => {
      const req = httpGet(url, { headers: host ? { host } : {} }, (res) => {
        if (res.statusCode !== 200) errors++;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.byteLength;
          if (Date.now() > deadline) req.destroy();
        });
        res.on('end', resolve);
        res.on('close', resolve);
      });
      req.on('error', () => resolve());
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) await once();
    }),
  );
  return { mbps: bytes / MB / ((Date.now() - started) / 1000), errors };
}

/** The answer to a GET as text, with its cookies. */
function getPage(url: string, host: string): Promise<{ html: string; cookies: string[] }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers: { host } }, (res) => {
      let html = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        html += chunk;
      });
      res.on('end', () =>
        resolve({ html, cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0] ?? '') }),
      );
    }).on('error', reject);
  });
}

/** The reply form's fields for a new visitor: its cookie, CSRF token and form token. */
async function replyForm(product: Server, path: string) {
  const { html, cookies } = await getPage(`${product.base}${path}`, PAGE_HOST);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? '';
  return { cookie: cookies.join('; '), csrf: field('csrf'), submit: field('submit') };
}

type Form = { cookie: string; csrf: string; submit: string };

/**
 * `count` uploads of `UPLOAD_MB` MB each at once, made by `send`, RSS and the recordings kept on
 * disk (BENCH_MEDIA_DIR) sampled every 100 ms.
 */
async function uploadMany(
  product: Server,
  send: (product: Server, path: string, form: Form) => Promise<number>,
  count = UPLOADS,
) {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  const slug = (
    await db.query<{ slug: string }>(
      `select c.slug from conversation c join account a on a.id = c.account_id where a.host like $1 order by c.id limit 1`,
      [`%${PAGE_HOST}`],
    )
  ).rows[0]?.slug;
  // Anonymous replies, so a visitor's upload is read and measured (and, being noise, refused).
  await db.query(
    `update conversation set allow_anonymous_messages = true where account_id = (select id from account where host like $1)`,
    [`%${PAGE_HOST}`],
  );
  await db.end();
  const path = `/c/${slug}`;
  const rss = () => Math.round(rssMb(product));
  await new Promise((r) => setTimeout(r, 1000));
  const idleMb = rss();
  const diskBefore = diskMb();
  let peakMb = idleMb;
  let diskPeakMb = 0;
  const sampler = setInterval(() => {
    peakMb = Math.max(peakMb, rss());
    diskPeakMb = Math.max(diskPeakMb, diskMb() - diskBefore);
  }, 100);
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: count }, async () => send(product, path, await replyForm(product, path))),
  );
  clearInterval(sampler);
  return { idleMb, peakMb, diskPeakMb, seconds: (performance.now() - started) / 1000, statuses };
}

/** MB of recordings (and their parts) under BENCH_MEDIA_DIR, uploads aside. */
function diskMb(): number {
  let bytes = 0;
  for (const e of readdirSync(BENCH_MEDIA_DIR, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || e.parentPath.includes('uploads')) continue;
    try {
      bytes += statSync(join(e.parentPath, e.name)).size;
    } catch {
      // Gone between the listing and the look: renamed into place, or removed.
    }
  }
  return bytes / MB;
}

/** A reply form posted with a real 3 s M4A whose last box, its moov, is made to hold UPLOAD_MB MB. */
async function postCrafted(product: Server, path: string, form: Form) {
  const m4a = new Uint8Array(readFileSync(join(ROOT, 'apps/api/test/fixtures/media/audio-3s.m4a')));
  const view = new DataView(m4a.buffer, m4a.byteOffset);
  let moov = 0;
  for (let at = 0; at < m4a.byteLength; at += view.getUint32(at)) {
    if (Buffer.from(m4a.subarray(at + 4, at + 8)).toString('latin1') === 'moov') moov = at;
  }
  const padding = UPLOAD_MB * MB;
  view.setUint32(moov, view.getUint32(moov) + padding + 8);
  const free = Buffer.alloc(8);
  free.writeUInt32BE(padding + 8);
  free.write('free', 4, 'latin1');
  const zeros = Buffer.alloc(MB);
  async function* recording() {
    yield m4a;
    yield free;
    for (let i = 0; i < UPLOAD_MB; i++) yield zeros;
  }
  return postUpload(product, path, form, {
    bytes: m4a.byteLength + 8 + padding,
    body: recording(),
    name: 'crafted.m4a',
  });
}

/** UPLOAD_MB MB of noise, a megabyte at a time, made as it is sent. */
async function* noise() {
  const chunk = randomBytes(MB);
  for (let i = 0; i < UPLOAD_MB; i++) yield chunk;
}

/** A request to the product as the page account's site, its body streamed; the answer's status and headers. */
function send(
  product: Server,
  path: string,
  method: string,
  headers: Record<string, string>,
  body?: AsyncIterable<Uint8Array>,
) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    const req = httpRequest(
      new URL(path, product.base),
      { method, headers: { host: PAGE_HOST, origin: `https://${PAGE_HOST}`, ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on('error', reject);
    if (body) Readable.from(body).pipe(req);
    else req.end();
  });
}

/** One resumable upload (tus) of UPLOAD_MB MB for the conversation at `path`, in one PATCH. */
async function tusUpload(product: Server, path: string, form: Form) {
  const meta = (v: string) => Buffer.from(v).toString('base64');
  const tus = { 'tus-resumable': '1.0.0', cookie: form.cookie };
  const created = await send(product, '/uploads', 'POST', {
    ...tus,
    'upload-length': String(UPLOAD_MB * MB),
    'upload-metadata': `conversation ${meta(path.slice('/c/'.length))},csrf ${meta(form.csrf)}`,
  });
  const location = created.headers.location;
  if (created.status !== 201 || typeof location !== 'string') return created.status;
  const patched = await send(
    product,
    location,
    'PATCH',
    {
      ...tus,
      'upload-offset': '0',
      'content-type': 'application/offset+octet-stream',
      'content-length': String(UPLOAD_MB * MB),
    },
    noise(),
  );
  return patched.status;
}

/** One reply form posted with a recording (UPLOAD_MB MB of noise unless given), streamed as it is made. */
async function postUpload(
  product: Server,
  path: string,
  form: Form,
  file: { bytes: number; body: AsyncIterable<Uint8Array>; name: string } = {
    bytes: UPLOAD_MB * MB,
    body: noise(),
    name: 'big.webm',
  },
) {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    [
      `--${boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n${form.csrf}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="submit"\r\n\r\n${form.submit}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="media"; filename="${file.name}"\r\nContent-Type: video/webm\r\n\r\n`,
    ].join(''),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* body() {
    yield head;
    yield* file.body;
    yield tail;
  }
  // A form refused before its file closes the connection while the rest is on its way: a reset
  // is that refusal, seen from here (0).
  const answer = await send(
    product,
    path,
    'POST',
    {
      cookie: form.cookie,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.byteLength + file.bytes + tail.byteLength),
    },
    body(),
  ).catch(() => ({ status: 0 }));
  return answer.status;
}

/**
 * A one-hour WebM as MediaRecorder writes one (appended as it records: no duration, no cues),
 * made from the 3 s fixture's packets repeated with shifted timestamps, then probed as the server
 * probes an upload when MEDIA_MAX_SECONDS lets an hour through (under the default 10 minutes the
 * probe would stop at the tenth minute).
 */
async function probeHour(): Promise<{ ms: number; mb: number; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'convo-bench-probe-'));
  try {
    const key = `1/${randomBytes(16).toString('hex')}`;
    mkdirSync(join(dir, '1'));
    const path = join(dir, key);
    await writeHourLongWebm(path);
    const size = statSync(path).size;
    const store = new DiskMediaStore(dir);
    const started = performance.now();
    const probed = await new MediabunnyProbe({ timeoutMs: 60_000, maxSeconds: 7200 }).probe(store, key, size);
    const ms = performance.now() - started;
    if (!probed.ok) throw new Error(`the one-hour WebM was refused: ${probed.problem}`);
    return { ms, mb: Math.round(size / MB), seconds: probed.media.seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function writeHourLongWebm(path: string) {
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
  const videoPackets = [];
  for await (const p of new EncodedPacketSink(video).packets()) videoPackets.push(p);
  const audioPackets = [];
  for await (const p of new EncodedPacketSink(audio).packets()) audioPackets.push(p);
  const videoConfig = { decoderConfig: (await video.getDecoderConfig()) ?? undefined };
  const audioConfig = { decoderConfig: (await audio.getDecoderConfig()) ?? undefined };
  // A little over the fixture's 3.001 s, so each track's timestamps keep rising across rounds.
  const span = 3.1;
  for (let round = 0; round < Math.ceil(3600 / span); round++) {
    const shift = round * span;
    // Interleaved by time, as a recorder writes them.
    const merged = [
      ...videoPackets.map((p) => ({ p, video: true })),
      ...audioPackets.map((p) => ({ p, video: false })),
    ].sort((a, b) => a.p.timestamp - b.p.timestamp);
    for (const { p, video: isVideo } of merged) {
      const moved = p.clone({ timestamp: p.timestamp + shift });
      if (isVideo) await videoOut.add(moved, round === 0 ? videoConfig : undefined);
      else await audioOut.add(moved, round === 0 ? audioConfig : undefined);
    }
  }
  await output.finalize();
  input.dispose();
}
