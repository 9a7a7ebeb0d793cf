import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from './support/load.ts';
import { type Balancer, nginxMain, runNginx, SHIPPED_FORWARDING, shippedLocation } from './support/nginx.ts';
import { freePort, startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { cli, type ServerProcess, startServer } from './support/server.ts';

/*
 * Recordings as the server processes send them, the way an operator deploys them:
 * - straight from the file on Node (no proxy to hand to): whole, in ranges, revalidated, and a
 *   client that goes away mid-download gives its place back;
 * - handed to nginx (MEDIA_ACCEL_REDIRECT): once the server let the reader in, nginx sends the
 *   bytes, from the directory (an internal location with an alias) or from the bucket (the shipped
 *   compose nginx.conf's own location, pointed at a real S3-protocol server), with the headers the
 *   server gives a recording; a reader the server refuses gets its 404, and nobody reaches the
 *   internal location by asking for it.
 */

const HOST = 'rec.example.com';
const OTHER_HOST = 'other.example.com';
const BUCKET = 'conversations-media';
const MB = 1024 * 1024;

let db: ThrowawayPostgres;
let mediaDir: string;
let s3: S3rver;
let s3Dir: string;
let token: string;
let direct: ServerProcess;
let handing: ServerProcess;
let fromBucket: ServerProcess;
let nginx: Balancer;
/** The two listening ports of nginx: in front of `handing` (disk) and of `fromBucket` (S3). */
let diskPort: number;
let bucketPort: number;

interface Planted {
  id: number;
  bytes: Buffer;
}
let open: Planted;
let secret: Planted;
let inBucket: Planted;
let accountKey: string;

beforeAll(async () => {
  db = await startThrowawayPostgres();
  mediaDir = mkdtempSync(join(tmpdir(), 'convo-chaos-media-'));
  s3Dir = mkdtempSync(join(tmpdir(), 'convo-chaos-s3-'));
  s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const s3Port = (await s3.run()).port;

  const made = cli(db.url, [
    'account',
    'create',
    '--key',
    'rec',
    '--name',
    'Rec',
    '--host',
    `http://${HOST}`,
    '--owner-email',
    'o@rec.example',
    '--owner-name',
    'Owner',
  ]);
  token = made.token.token;
  cli(db.url, ['account', 'create', '--key', 'other', '--name', 'Other', '--host', `http://${OTHER_HOST}`]);

  const s3Env = {
    MEDIA_S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
    MEDIA_S3_BUCKET: BUCKET,
    MEDIA_S3_PATH_STYLE: 'true',
    MEDIA_S3_ACCESS_KEY_ID: 'S3RVER',
    MEDIA_S3_SECRET_ACCESS_KEY: 'S3RVER',
    MEDIA_S3_REDIRECT: 'false',
    MEDIA_ACCEL_REDIRECT: '/internal/media/',
  };
  [direct, handing, fromBucket] = await Promise.all([
    startServer(db.url, { MEDIA_DIR: mediaDir, MEDIA_DOWNLOADS_PER_CLIENT: '1' }),
    startServer(db.url, { MEDIA_DIR: mediaDir, MEDIA_ACCEL_REDIRECT: '/internal/media/', TRUST_PROXY: '1' }),
    startServer(db.url, { ...s3Env, TRUST_PROXY: '1' }),
  ]);
  const conversation = async (slug: string, anyone: boolean) => {
    const res = await fetch(`${direct.baseUrl}/api/v1/conversations/create_conversation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: slug, slug, anyone_can_post: anyone }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: number }).id;
  };
  const openId = await conversation('open', true);
  const secretId = await conversation('secret', false);

  const s3Client = new S3Client({
    endpoint: `http://127.0.0.1:${s3Port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    accountKey = 'rec';
    const accountId = made.id as number;
    /** A recording's bytes kept as the server keeps them (0600 in 0700), and its message. */
    const plant = async (conversationId: number, where: 'disk' | 'bucket'): Promise<Planted> => {
      const bytes = randomBytes(4 * MB + 123);
      const key = `${accountId}/${randomBytes(16).toString('hex')}`;
      if (where === 'disk') {
        mkdirSync(join(mediaDir, String(accountId)), { recursive: true, mode: 0o700 });
        writeFileSync(join(mediaDir, key), bytes, { mode: 0o600 });
      } else {
        await s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: bytes }));
      }
      const { rows } = await client.query<{ id: number }>(
        `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, anonymous, text,
                              media_key, media_content_type, media_bytes)
         values ($1, $2, 'video', 60, true, '', $3, 'video/webm', $4) returning id`,
        [accountId, conversationId, key, bytes.byteLength],
      );
      return { id: rows[0]?.id ?? 0, bytes };
    };
    open = await plant(openId, 'disk');
    secret = await plant(secretId, 'disk');
    inBucket = await plant(openId, 'bucket');
  } finally {
    await client.end();
    s3Client.destroy();
  }
  chmodSync(mediaDir, 0o700);

  // nginx's workers read the directory as the server's user does (the hand-off's one condition).
  bucketPort = await freePort();
  const handingPort = new URL(handing.baseUrl).port;
  const bucketServer = new URL(fromBucket.baseUrl).port;
  nginx = await runNginx((dir, port) => {
    diskPort = port;
    return `user ${userInfo().username};\n${nginxMain(
      dir,
      256,
      `server {
    listen 127.0.0.1:${port};
    location = /healthz { return 200; }
    # The directory variant (docs/operating.md): the same headers as the shipped location.
    location /internal/media/ {
      internal;
      alias ${mediaDir}/;
      set $recording_corp $upstream_http_cross_origin_resource_policy;
      add_header Cross-Origin-Resource-Policy $recording_corp always;
      add_header X-Content-Type-Options nosniff always;
      add_header Content-Security-Policy "default-src 'none'; sandbox" always;
    }
    location / {
      proxy_pass http://127.0.0.1:${handingPort};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      ${SHIPPED_FORWARDING}
    }
  }
  server {
    listen 127.0.0.1:${bucketPort};
    ${shippedLocation('/internal/media/').replaceAll('minio:9000', `127.0.0.1:${s3Port}`)}
    location / {
      proxy_pass http://127.0.0.1:${bucketServer};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      ${SHIPPED_FORWARDING}
    }
  }`,
    )}`;
  });
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  for (const s of [direct, handing, fromBucket]) await s?.kill();
  await s3?.close();
  db?.destroy();
  for (const dir of [mediaDir, s3Dir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

interface Got {
  status: number;
  header(name: string): string | null;
  body: Buffer;
}

/** A GET on `base` as the account's site (`host`: fetch would not send another Host), with `headers`. */
function get(base: string, path: string, headers: Record<string, string> = {}, host = HOST): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          header: (name) => {
            const value = res.headers[name];
            return value === undefined ? null : String(value);
          },
          body: Buffer.concat(chunks),
        }),
      );
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

const through = (port: number) => `http://127.0.0.1:${port}`;

describe('recordings sent by the server itself (Node, from the file)', () => {
  it('sends the whole file, a range of it, and 304 to a reader who has it', async () => {
    const whole = await get(direct.baseUrl, `/media/${accountKey}/${open.id}`);
    expect(whole.status).toBe(200);
    expect(whole.header('content-length')).toBe(String(open.bytes.byteLength));
    expect(sha(whole.body)).toBe(sha(open.bytes));
    const part = await get(direct.baseUrl, `/media/${accountKey}/${open.id}`, { range: 'bytes=1000000-3000000' });
    expect(part.status).toBe(206);
    expect(part.body.equals(open.bytes.subarray(1_000_000, 3_000_001))).toBe(true);
    const etag = whole.header('etag') ?? '';
    expect((await get(direct.baseUrl, `/media/${accountKey}/${open.id}`, { 'if-none-match': etag })).status).toBe(304);
  });

  it('gives a client’s place back when it goes away mid-download (one at a time here)', async () => {
    // Reads a little of the recording, then drops the connection.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        `${direct.baseUrl}/media/${accountKey}/${open.id}`,
        { headers: { host: HOST } },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.once('error', reject);
      req.end();
    });
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await get(direct.baseUrl, `/media/${accountKey}/${open.id}`)).status;
      if (status !== 200) await sleep(100);
    }
    expect(status).toBe(200);
  });

  it('refuses a private recording to anyone but the account, and another account’s host', async () => {
    expect((await get(direct.baseUrl, `/media/${accountKey}/${secret.id}`)).status).toBe(404);
    const owner = await get(direct.baseUrl, `/media/${accountKey}/${secret.id}`, { authorization: `Bearer ${token}` });
    expect(owner.status).toBe(200);
    expect(sha(owner.body)).toBe(sha(secret.bytes));
    expect((await get(direct.baseUrl, `/media/${accountKey}/${open.id}`, {}, OTHER_HOST)).status).toBe(404);
  });
});

describe.each([
  ['from the directory', () => diskPort, () => open],
  ['from the bucket (the shipped compose location)', () => bucketPort, () => inBucket],
])('recordings handed to nginx %s', (_, port, planted) => {
  it('sends the bytes with the headers the server gives a recording, and never names where they are', async () => {
    const { id, bytes } = planted();
    const whole = await get(through(port()), `/media/${accountKey}/${id}?download=1`);
    expect(whole.status).toBe(200);
    expect(sha(whole.body)).toBe(sha(bytes));
    const h = { get: whole.header };
    expect(h.get('content-type')).toBe('video/webm');
    expect(h.get('content-disposition')).toBe(`attachment; filename="message-${id}.webm"`);
    expect(h.get('cache-control')).toBe('public, max-age=3600');
    expect(h.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(h.get('x-content-type-options')).toBe('nosniff');
    expect(h.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(h.get('accept-ranges')).toBe('bytes');
    expect(h.get('x-accel-redirect')).toBeNull();
    expect(h.get('etag')).toBeTruthy();
  });

  it('answers ranges and revalidations itself', async () => {
    const { id, bytes } = planted();
    const part = await get(through(port()), `/media/${accountKey}/${id}`, { range: 'bytes=100-4194403' });
    expect(part.status).toBe(206);
    expect(part.header('content-range')).toBe(`bytes 100-4194403/${bytes.byteLength}`);
    expect(part.body.equals(bytes.subarray(100, 4194404))).toBe(true);
    const etag = part.header('etag') ?? '';
    expect((await get(through(port()), `/media/${accountKey}/${id}`, { 'if-none-match': etag })).status).toBe(304);
  });

  it('sends nothing the server refuses, and nothing asked for at the internal location', async () => {
    const { id } = planted();
    expect((await get(through(port()), `/media/${accountKey}/${id}`, {}, OTHER_HOST)).status).toBe(404);
    const missing = await get(through(port()), `/media/${accountKey}/999999`);
    expect(missing.status).toBe(404);
    expect(missing.header('content-type')).toMatch(/^text\/html/);
    for (const path of ['/internal/media/', `/internal/media/${BUCKET}/`, '/internal/media/1/']) {
      expect((await get(through(port()), path)).status).toBe(404);
    }
  });
});

describe('a private recording handed to nginx', () => {
  it('goes to the account’s token only, for its own browser to keep', async () => {
    const anonymous = await get(through(diskPort), `/media/${accountKey}/${secret.id}`);
    expect(anonymous.status).toBe(404);
    expect(anonymous.body.byteLength).toBeLessThan(100_000);
    const owner = await get(through(diskPort), `/media/${accountKey}/${secret.id}`, {
      authorization: `Bearer ${token}`,
    });
    expect(owner.status).toBe(200);
    expect(sha(owner.body)).toBe(sha(secret.bytes));
    expect(owner.header('cache-control')).toBe('private, no-cache');
    expect(owner.header('cross-origin-resource-policy')).toBe('same-origin');
  });
});
