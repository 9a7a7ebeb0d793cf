import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSeed } from '@convo/db';
import type { MediaProbe } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/http/app.ts';
import { withChanges } from '../src/http/settings.ts';
import { diskMedia } from '../src/media/backend.ts';
import type { MediaBackend } from '../src/media/uploads.ts';
import { auth, call, type Harness, openHarness, secondApp } from './support/harness.ts';
import { Visitor } from './support/site.ts';

/*
 * Resumable uploads of recordings (tus 1.0 at /uploads/): what the recorder on the page does with
 * JavaScript on. An upload belongs to the visitor's cookie and one conversation; a cut upload
 * resumes from the offset the server kept; the reply form turns a finished upload into a message
 * measured like any recording; unfinished or unposted uploads are gone after a day.
 */

const HOST = 'https://up.example.com';
const OTHER_HOST = 'https://other-up.example.com';
const TOKEN = 'up-site-token-0123456789';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;
const LIMITS = { maxSeconds: 5, maxBytes: 60 * 1024 };
const VIDEO = new Uint8Array(readFileSync(join(FIXTURES, 'video-3s.webm')));

let h: Harness;
let mediaDir: string;
let backend: MediaBackend;

beforeAll(async () => {
  mediaDir = mkdtempSync(join(tmpdir(), 'convo-uploads-'));
  backend = diskMedia(mediaDir);
  h = await openHarness({
    services: { media: { backend, limits: LIMITS } },
    app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } }, http: { body: { timeoutMs: 500 } } },
  });
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'up',
        name: 'Up',
        host: HOST,
        owner: 'uma@up.example',
        users: [{ email: 'uma@up.example', name: 'Uma' }],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          { title: 'Open', slug: 'open', anyone_can_post: true, allow_anonymous_messages: true },
          { title: 'Elsewhere', slug: 'elsewhere', anyone_can_post: true, allow_anonymous_messages: true },
          { title: 'Private', slug: 'private', anyone_can_post: false, allow_anonymous_messages: true },
        ],
      },
      {
        key: 'otherup',
        name: 'Other',
        host: OTHER_HOST,
        owner: 'otto@other.example',
        users: [{ email: 'otto@other.example', name: 'Otto' }],
        conversations: [{ title: 'Theirs', slug: 'theirs', allow_anonymous_messages: true }],
      },
    ],
  });
});
afterAll(async () => {
  await h?.close();
  rmSync(mediaDir, { recursive: true, force: true });
});

/** The upload metadata header: each value base64, as tus-js-client sends it. */
const metadata = (values: Record<string, string>) =>
  Object.entries(values)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

/** A visitor of a conversation page, speaking tus to the site as the page's recorder does. */
class Recorder {
  readonly visitor: Visitor;
  private readonly origin: string;

  /** The server its tus requests go to (its page is opened on the harness's). */
  app: App = h.app;

  constructor(origin = HOST) {
    this.origin = origin;
    this.visitor = new Visitor(h, origin);
  }

  async open(slug = 'open') {
    await this.visitor.get(`/c/${slug}`);
    return this;
  }

  get csrf() {
    return this.visitor.hidden('csrf');
  }

  request(
    path: string,
    method: string,
    headers: Record<string, string> = {},
    body?: Blob | ReadableStream<Uint8Array>,
  ) {
    const cookie = [...this.visitor.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return this.app.fetch(
      new Request(`${this.origin}${path}`, {
        method,
        headers: { 'tus-resumable': '1.0.0', origin: this.origin, ...(cookie ? { cookie } : {}), ...headers },
        body,
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      }),
    );
  }

  /** Creates an upload of `length` bytes for `slug`; the response (201 with its Location). */
  create(length: number, slug = 'open', extra: Record<string, string> = {}) {
    return this.request('/uploads', 'POST', {
      'upload-length': String(length),
      'upload-metadata': metadata({ conversation: slug, csrf: this.csrf, filetype: 'video/webm', ...extra }),
    });
  }

  async created(length: number, slug = 'open'): Promise<string> {
    const res = await this.create(length, slug);
    expect(res.status, await res.clone().text()).toBe(201);
    const location = res.headers.get('location') ?? '';
    expect(location).toMatch(/^\/uploads\/[0-9a-f]{32}$/);
    return location;
  }

  patch(location: string, offset: number, bytes: Uint8Array | ReadableStream<Uint8Array>) {
    return this.request(
      location,
      'PATCH',
      { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
      bytes instanceof ReadableStream ? bytes : new Blob([bytes]),
    );
  }

  async offset(location: string): Promise<number | null> {
    const res = await this.request(location, 'HEAD');
    return res.status === 200 ? Number(res.headers.get('upload-offset')) : null;
  }

  /** Uploads all of `bytes` in one PATCH; the upload's path. */
  async upload(bytes: Uint8Array, slug = 'open'): Promise<string> {
    const location = await this.created(bytes.byteLength, slug);
    const res = await this.patch(location, 0, bytes);
    expect(res.status).toBe(204);
    return location;
  }

  /** Posts the reply form naming a finished upload, from the page it was made for. */
  async post(location: string, slug = 'open', fields: Record<string, string> = {}) {
    const upload = location.split('/').pop() ?? '';
    return this.visitor.post(`/c/${slug}`, {
      csrf: this.csrf,
      submit: this.visitor.hidden('submit'),
      upload,
      ...fields,
    });
  }
}

async function messagesOf(slug: string) {
  const res = await call(
    h,
    new Request(`http://api.test/api/v1/conversations/get_conversation?slug=${slug}`, { headers: auth(TOKEN) }),
  );
  return (res.body as { messages: Record<string, unknown>[] }).messages;
}

const uploadFiles = () => readdirSync(join(mediaDir, 'uploads')).filter((name) => /^[0-9a-f]{32}$/.test(name));

describe('resumable uploads (tus 1.0)', () => {
  it('turns a finished upload into a message, measured by the server, and keeps no copy of the upload', async () => {
    const recorder = await new Recorder().open();
    const location = await recorder.upload(VIDEO);
    const page = await recorder.post(location, 'open', { text: 'Hello on video', media_kind: 'video' });
    expect(page.status).toBe(303);
    const id = Number(/#message-(\d+)$/.exec(page.headers.get('location') ?? '')?.[1]);
    const message = (await messagesOf('open')).find((m) => m.id === id);
    expect(message).toMatchObject({
      message_type: 'video',
      recorded_duration_seconds: 3,
      text: 'Hello on video',
      download_media_url: `${HOST}/media/up/${id}`,
    });
    const served = await h.app.fetch(new Request(`${HOST}/media/up/${id}`));
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(VIDEO);
    expect(await recorder.offset(location)).toBeNull();
    expect(uploadFiles()).not.toContain(location.split('/').pop());
  });

  it('resumes an upload cut in the middle from the offset the server kept', async () => {
    const recorder = await new Recorder().open();
    const location = await recorder.created(VIDEO.byteLength);
    const half = Math.floor(VIDEO.byteLength / 2);
    // The connection drops after half the bytes: the body ends with an error, as a cut socket's does.
    const cut = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(VIDEO.slice(0, half));
        setTimeout(() => controller.error(new Error('connection reset')), 50);
      },
    });
    const first = await recorder.patch(location, 0, cut);
    expect(first.status).toBe(400);
    const kept = await recorder.offset(location);
    expect(kept).toBe(half);
    // A PATCH from anywhere else than the kept offset is refused (409), and changes nothing.
    expect((await recorder.patch(location, 0, VIDEO)).status).toBe(409);
    const rest = await recorder.patch(location, half, VIDEO.slice(half));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-offset')).toBe(String(VIDEO.byteLength));
    const page = await recorder.post(location, 'open', { media_kind: 'video' });
    expect(page.status).toBe(303);
    const id = Number(/#message-(\d+)$/.exec(page.headers.get('location') ?? '')?.[1]);
    const served = await h.app.fetch(new Request(`${HOST}/media/up/${id}`));
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(VIDEO);
  });

  it('lets go of a PATCH whose bytes stop coming (BODY_TIMEOUT_MS), keeping what came to resume from', async () => {
    const recorder = await new Recorder().open();
    const location = await recorder.created(VIDEO.byteLength);
    // A sender that sends 1,000 bytes and then nothing, never ending its body.
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(VIDEO.slice(0, 1000));
      },
    });
    const started = performance.now();
    const res = await recorder.patch(location, 0, stalled);
    expect(res.status).toBe(408);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await recorder.offset(location)).toBe(1000);
    expect((await recorder.patch(location, 1000, VIDEO.slice(1000))).status).toBe(204);
  });

  it('answers HEAD with the offset, lets its owner terminate it, and never reads it back with GET', async () => {
    const recorder = await new Recorder().open();
    const location = await recorder.created(VIDEO.byteLength);
    const head = await recorder.request(location, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('0');
    expect(head.headers.get('upload-length')).toBe(String(VIDEO.byteLength));
    expect(head.headers.get('tus-resumable')).toBe('1.0.0');
    expect((await recorder.request(location, 'GET')).status).toBe(405);
    expect((await recorder.request(location, 'DELETE')).status).toBe(204);
    expect(await recorder.offset(location)).toBeNull();
  });

  it('waits for a named upload’s probe past the request timeout, and answers the same form again with its message', async () => {
    // The probe takes longer than the request timeout (busy with other recordings).
    const probe = h.services.media.probe;
    const slowProbe: MediaProbe = {
      probe: async (store, key, size) => {
        await new Promise((r) => setTimeout(r, 600));
        return probe.probe(store, key, size);
      },
    };
    const app = createApp(
      { ...h.services, media: { ...h.services.media, probe: slowProbe } },
      withChanges({ http: { requestTimeoutMs: 200 } }),
    );
    const recorder = await new Recorder().open();
    const location = await recorder.upload(VIDEO);
    const slow = new Visitor({ ...h, app }, HOST);
    for (const [name, value] of recorder.visitor.cookies) slow.cookies.set(name, value);
    const fields = {
      csrf: recorder.csrf,
      submit: recorder.visitor.hidden('submit'),
      upload: location.split('/').pop() ?? '',
      text: 'Measured slowly',
    };
    const first = await slow.post('/c/open', fields);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toMatch(/^\/c\/open#message-\d+$/);
    // The browser sends the form again (its answer was lost): the message it made, not "record again".
    const again = await slow.post('/c/open', fields);
    expect([again.status, again.headers.get('location')]).toEqual([303, first.headers.get('location')]);
    expect((await messagesOf('open')).filter((m) => m.text === 'Measured slowly')).toHaveLength(1);
  });

  it('tells a client what it takes (OPTIONS: the core protocol’s discovery), at /uploads and /uploads/', async () => {
    for (const path of ['/uploads', '/uploads/']) {
      const res = await h.app.fetch(new Request(`${HOST}${path}`, { method: 'OPTIONS' }));
      expect(res.status, path).toBe(204);
      expect(res.headers.get('tus-version')).toBe('1.0.0');
      expect(res.headers.get('tus-extension')).toMatch(/creation/);
      expect(res.headers.get('tus-max-size')).toBe(String(LIMITS.maxBytes));
    }
  });
});

describe('refusing an upload', () => {
  it('answers 503 with Retry-After, not a 500, while the database cannot answer', async () => {
    // The same services, but the conversation's access cannot be read: a lock held past the
    // statement timeout (as a migration's would), as PostgreSQL reports it.
    const down = Object.create(h.services.site);
    down.conversationAccess = () =>
      Promise.reject(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    const app = createApp({ ...h.services, site: down }, withChanges());
    const recorder = await new Recorder().open();
    recorder.app = app;
    const created = await recorder.create(VIDEO.byteLength);
    expect(created.status).toBe(503);
    expect(created.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await created.text()).toMatch(/try again/);
  });

  it('refuses a creation from another site, without the cookie, or with a stale page token (403)', async () => {
    const before = uploadFiles();
    const recorder = await new Recorder().open();
    const headers = {
      'upload-length': '100',
      'upload-metadata': metadata({ conversation: 'open', csrf: recorder.csrf }),
    };
    expect((await recorder.request('/uploads', 'POST', { ...headers, origin: 'https://evil.example' })).status).toBe(
      403,
    );
    const anonymous = await h.app.fetch(
      new Request(`${HOST}/uploads`, {
        method: 'POST',
        headers: { 'tus-resumable': '1.0.0', origin: HOST, ...headers },
      }),
    );
    expect(anonymous.status).toBe(403);
    expect((await recorder.create(100, 'open', { csrf: 'stale' })).status).toBe(403);
    expect(uploadFiles()).toEqual(before);
  });

  it("refuses a conversation the visitor may not reply to, or another account's, as missing (404)", async () => {
    const before = uploadFiles();
    const recorder = await new Recorder().open();
    for (const slug of ['private', 'theirs', 'nothing-here', '']) {
      const res = await recorder.create(100, slug);
      expect(res.status, slug).toBe(404);
      expect(await res.text()).toContain('no such conversation');
    }
    expect(uploadFiles()).toEqual(before);
  });

  it('refuses a declared length over MEDIA_MAX_BYTES before any byte (413)', async () => {
    const recorder = await new Recorder().open();
    expect((await recorder.create(LIMITS.maxBytes + 1)).status).toBe(413);
  });

  it("answers another visitor's upload, or one asked for on another account's host, as missing", async () => {
    const owner = await new Recorder().open();
    const location = await owner.created(VIDEO.byteLength);
    const stranger = await new Recorder().open();
    expect(await stranger.offset(location)).toBeNull();
    expect((await stranger.patch(location, 0, VIDEO)).status).toBe(404);
    expect((await stranger.request(location, 'DELETE')).status).toBe(404);
    const elsewhere = await new Recorder(OTHER_HOST).open('theirs');
    expect(await elsewhere.offset(location)).toBeNull();
    expect(await owner.offset(location)).toBe(0);
  });

  it("refuses a reply naming another visitor's upload, an unfinished one, or one made for another conversation", async () => {
    const owner = await new Recorder().open();
    const finished = await owner.upload(VIDEO);
    const before = (await messagesOf('open')).length;

    const stranger = await new Recorder().open();
    const theirs = await stranger.post(finished);
    expect(theirs.status).toBe(422);
    expect(theirs.html).toContain('not here any more');

    const unfinished = await owner.created(VIDEO.byteLength);
    await owner.patch(unfinished, 0, VIDEO.slice(0, 1000));
    await owner.open();
    const early = await owner.post(unfinished);
    expect(early.status).toBe(422);
    expect(early.html).toContain('not finished uploading');

    const other = await new Recorder().open('elsewhere');
    const made = await other.upload(VIDEO, 'elsewhere');
    await other.open('open');
    expect((await other.post(made, 'open')).status).toBe(422);

    expect(await messagesOf('open')).toHaveLength(before);
    // The owner's finished upload is still theirs to post.
    await owner.open();
    expect((await owner.post(finished)).status).toBe(303);
  });

  it('refuses bytes that are not a recording when the reply is posted, and keeps none of them', async () => {
    const recorder = await new Recorder().open();
    const html = new TextEncoder().encode('<!doctype html><title>x</title><script>alert(1)</script>');
    const location = await recorder.upload(html);
    const files = () => readdirSync(mediaDir, { recursive: true }).length;
    const kept = files();
    const page = await recorder.post(location);
    expect(page.status).toBe(422);
    expect(page.html).toContain('not a recording');
    expect(files()).toBe(kept - 2);
  });
});

describe('uploads nothing posted', () => {
  it('are deleted after a day, finished or not, with their bytes', async () => {
    const recorder = await new Recorder().open();
    const unfinished = await recorder.created(VIDEO.byteLength);
    await recorder.patch(unfinished, 0, VIDEO.slice(0, 500));
    const finished = await recorder.upload(VIDEO);
    expect(await h.services.uploads.sweep()).toBe(0);
    const tomorrow = new Date(Date.now() + 25 * 3600_000);
    expect(await h.services.uploads.sweep(tomorrow)).toBeGreaterThanOrEqual(2);
    expect(await recorder.offset(unfinished)).toBeNull();
    expect(await recorder.offset(finished)).toBeNull();
    expect(uploadFiles()).toHaveLength(0);
  });

  it('lets an upload that stopped growing go after two hours; a finished one waits its day', async () => {
    const recorder = await new Recorder().open();
    const unfinished = await recorder.created(VIDEO.byteLength);
    await recorder.patch(unfinished, 0, VIDEO.slice(0, 500));
    const finished = await recorder.upload(VIDEO);
    const later = new Date(Date.now() + 2 * 3600_000 + 60_000);
    expect(await h.services.uploads.sweep(later)).toBe(1);
    expect(await recorder.offset(unfinished)).toBeNull();
    expect(await recorder.offset(finished)).toBe(VIDEO.byteLength);
    await recorder.request(finished, 'DELETE');
  });

  it('holds unposted uploads to quotas (per visitor, account, in all) and leaves the disk room: else 507', async () => {
    // Two uploads of the largest recording a visitor may hold at once (2 × MEDIA_MAX_BYTES).
    const recorder = await new Recorder().open();
    const held = [await recorder.created(LIMITS.maxBytes), await recorder.created(LIMITS.maxBytes)];
    const third = await recorder.create(LIMITS.maxBytes);
    expect(third.status).toBe(507);
    expect(await third.text()).toMatch(/too much is being uploaded/);
    // One whose length comes at its end counts as the largest until then.
    const deferred = await recorder.request('/uploads', 'POST', {
      'upload-defer-length': '1',
      'upload-metadata': metadata({ conversation: 'open', csrf: recorder.csrf, filetype: 'video/webm' }),
    });
    expect(deferred.status).toBe(507);
    // Another visitor has a quota of their own; once one is given up, the first has room again.
    const other = await new Recorder().open();
    const theirs = await other.created(LIMITS.maxBytes);
    await recorder.request(held[0] ?? '', 'DELETE');
    const again = await recorder.created(LIMITS.maxBytes);
    for (const [who, location] of [
      [recorder, held[1]],
      [recorder, again],
      [other, theirs],
    ] as const) {
      await who.request(location ?? '', 'DELETE');
    }
    // A disk that cannot keep a recording and the reserve beside it takes none.
    const full = { ...backend, uploads: { ...backend.uploads, freeBytes: async () => 1024 * 1024 } };
    const app = secondApp(
      h,
      { media: { backend: full, limits: LIMITS } },
      { site: { limits: { perIpPerMinute: 1000 } } },
    );
    const visitor = await new Recorder().open();
    visitor.app = app;
    expect((await visitor.create(1000)).status).toBe(507);
  });
});
