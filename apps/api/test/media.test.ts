import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSeed, PgMediaReferences } from '@convo/db';
import { mediaVerdict, posterKey, sweepRecordings } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diskMedia } from '../src/media/backend.ts';
import { DiskMediaStore } from '../src/media/disk-store.ts';
import { MediabunnyProbe, PROBE_QUEUE_PER_SENDER, PROBE_READ_MAX_BYTES } from '../src/media/probe.ts';
import { auth, call, type Harness, openHarness, secondApp } from './support/harness.ts';
import { signInLink } from './support/mailbox.ts';
import { mailTo, openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { attr, elements, fingerprint, open, type Upload, Visitor } from './support/site.ts';

/*
 * Recorded messages sent through the reply form with JavaScript off (a file input, posted as
 * multipart/form-data): what the server measures and posts, what it refuses (and then keeps no
 * byte of), and how the recording is served back (types, ranges, who may fetch it).
 */

const HOST = 'https://rec.example.com';
const TOKEN = 'rec-site-token-0123456789';
const OTHER_TOKEN = 'other-rec-token-0123456789';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;
/** Small limits, so "too long" and "too large" need no big file: 5 s and 60 KB. */
const LIMITS = { maxSeconds: 5, maxBytes: 60 * 1024 };

const fixture = (name: string, type: string): Upload => ({
  name,
  type,
  bytes: new Uint8Array(readFileSync(join(FIXTURES, name))),
});
const made = (name: string, type: string, text: string | Uint8Array<ArrayBuffer>): Upload => ({
  name,
  type,
  bytes: typeof text === 'string' ? new TextEncoder().encode(text) : text,
});

let h: Harness;
let mediaDir: string;

beforeAll(async () => {
  mediaDir = mkdtempSync(join(tmpdir(), 'convo-media-'));
  h = await openHarness({
    services: { media: { backend: diskMedia(mediaDir), limits: LIMITS } },
    app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } },
  });
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'rec',
        name: 'Rec',
        host: HOST,
        owner: 'olivia@rec.example',
        users: [{ email: 'olivia@rec.example', name: 'Olivia Owner' }],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          { title: 'Open', slug: 'open', anyone_can_post: true, allow_anonymous_messages: true },
          { title: 'Private', slug: 'private', anyone_can_post: false, allow_anonymous_messages: true },
        ],
      },
      {
        key: 'other',
        name: 'Other',
        host: 'https://other-rec.example.com',
        owner: 'oscar@other.example',
        users: [{ email: 'oscar@other.example', name: 'Oscar' }],
        tokens: [{ name: 'tests', token: OTHER_TOKEN }],
        conversations: [{ title: 'Theirs', slug: 'theirs', allow_anonymous_messages: true }],
      },
    ],
  });
});
afterAll(async () => {
  await h?.close();
  rmSync(mediaDir, { recursive: true, force: true });
});

/** Every file the media store keeps, under every account. */
const keptFiles = () => readdirSync(mediaDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());

async function messagesOf(slug: string, token = TOKEN) {
  const res = await call(
    h,
    new Request(`http://api.test/api/v1/conversations/get_conversation?slug=${slug}`, { headers: auth(token) }),
  );
  expect(res.status).toBe(200);
  return (res.body as { messages: Record<string, unknown>[] }).messages;
}

/** Posts a recording as a visitor with JavaScript off; the new message's id when it was posted. */
async function send(file: Upload | undefined, fields: Record<string, string> = {}, slug = 'open') {
  const visitor = new Visitor(h, HOST);
  const page = await visitor.replyWithRecording(slug, fields, file);
  const id = /#message-(\d+)$/.exec(page.headers.get('location') ?? '')?.[1];
  return { page, id: id ? Number(id) : null, visitor };
}

describe('sending a recording with the reply form (JavaScript off)', () => {
  it('offers a file input in a multipart form that posts to the page itself', async () => {
    const page = await new Visitor(h, HOST).get('/c/open');
    const form = elements(page.html).find((e) => e.tagName === 'form' && attr(e, 'class') === 'reply');
    expect(form && attr(form, 'enctype')).toBe('multipart/form-data');
    expect(form && attr(form, 'action')).toBe('/c/open#reply');
    const input = elements(page.html).find((e) => e.tagName === 'input' && attr(e, 'type') === 'file');
    expect(input && attr(input, 'name')).toBe('media');
    expect(input && attr(input, 'accept')).toBe('video/*,audio/*');
    expect(input && attr(input, 'capture')).toBeDefined();
  });

  it.each([
    ['video-3s.webm', 'video/webm', 'video', 3, 'video/webm'],
    ['video-3s-fragmented.mp4', 'video/mp4', 'video', 3, 'video/mp4'],
    ['audio-3s.webm', 'audio/webm', 'audio', 3, 'audio/webm'],
    ['audio-3s.ogg', 'audio/ogg', 'audio', 3, 'audio/ogg'],
    ['audio-3s.mp3', 'audio/mpeg', 'audio', 3, 'audio/mpeg'],
    ['audio-3s.m4a', 'audio/mp4', 'audio', 3, 'audio/mp4'],
    ['audio-2s.wav', 'audio/wav', 'audio', 2, 'audio/wav'],
  ])('posts %s as a %s message of the measured length', async (name, type, kind, seconds, served) => {
    const file = fixture(name, type);
    const { page, id } = await send(file);
    expect(page.status).toBe(303);
    const message = (await messagesOf('open')).find((m) => m.id === id);
    expect(message).toMatchObject({
      message_type: kind,
      recorded_duration_seconds: seconds,
      text: '',
      download_media_url: `${HOST}/media/rec/${id}`,
      author: { anonymous: true },
    });
    const media = await open(h, `${HOST}/media/rec/${id}`);
    expect(media.status).toBe(200);
    expect(media.headers.get('content-type')).toBe(served);
    expect(media.headers.get('content-length')).toBe(String(file.bytes.byteLength));
  });

  it('takes the kind from the bytes, not from the browser: audio-only bytes sent as video are audio', async () => {
    const { id } = await send(fixture('audio-3s.webm', 'video/webm'), { media_kind: 'video' });
    expect((await messagesOf('open')).find((m) => m.id === id)?.message_type).toBe('audio');
  });

  it('posts a screen recording as screen when the recorder says so, and keeps the caption', async () => {
    const { id } = await send(fixture('video-3s.webm', 'video/webm'), { media_kind: 'screen', text: 'See this' });
    const message = (await messagesOf('open')).find((m) => m.id === id);
    expect(message).toMatchObject({ message_type: 'screen', text: 'See this', recorded_duration_seconds: 3 });
  });

  it('still posts a text reply from the same form, with the file input left empty', async () => {
    const { page, id } = await send(made('', 'application/octet-stream', ''), { text: 'Just words' });
    expect(page.status).toBe(303);
    const message = (await messagesOf('open')).find((m) => m.id === id);
    expect(message).toMatchObject({ message_type: 'text', recorded_duration_seconds: 0, download_media_url: null });
  });

  it('posts a form sent twice once, and keeps one copy of its recording', async () => {
    const before = keptFiles().length;
    const visitor = new Visitor(h, HOST);
    await visitor.get('/c/open');
    const fields = { csrf: visitor.hidden('csrf'), submit: visitor.hidden('submit') };
    const file = fixture('audio-3s.ogg', 'audio/ogg');
    const first = await visitor.postMultipart('/c/open', fields, file);
    const second = await visitor.postMultipart('/c/open', fields, file);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(keptFiles().length).toBe(before + 1);
  });
});

describe('refusing what is not a recording', () => {
  const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, ...new Array(60).fill(0)]);
  const truncated = () => {
    const whole = readFileSync(join(FIXTURES, 'video-3s-fragmented.mp4'));
    return new Uint8Array(whole.subarray(0, Math.floor(whole.byteLength / 3)));
  };

  it.each([
    ['a renamed HTML page', made('clip.webm', 'video/webm', '<!doctype html><script>alert(1)</script>'), 422],
    ['an SVG', made('clip.mp4', 'video/mp4', '<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>'), 422],
    ['a ZIP', made('clip.ogg', 'audio/ogg', zip), 422],
    ['a recording cut off in the middle', made('clip.mp4', 'video/mp4', truncated()), 422],
  ])('refuses %s with a clear error, posting nothing and keeping no byte', async (_what, file, status) => {
    const before = await messagesOf('open');
    const kept = keptFiles().length;
    const { page } = await send(file, { text: 'caption' });
    expect(page.status).toBe(status);
    expect(page.html).toMatch(/not a recording|incomplete|cut off|empty/);
    // The form comes back with what was typed, and nothing changed.
    expect(page.html).toContain('caption');
    expect(await messagesOf('open')).toEqual(before);
    expect(keptFiles().length).toBe(kept);
  });

  it('refuses a recording longer than MEDIA_MAX_SECONDS', async () => {
    // Two 3 s recordings are not one 6 s one, so the limit is tested with the 2 s WAV and a 1 s limit.
    const short = await openHarness({
      services: {
        media: { backend: diskMedia(mediaDir), limits: { maxSeconds: 1, maxBytes: LIMITS.maxBytes } },
      },
      app: { site: { limits: { perIpPerMinute: 1000 } } },
    });
    try {
      await loadSeed(short.db.orm.em.fork(), {
        accounts: [
          {
            key: 'short',
            name: 'Short',
            host: HOST,
            conversations: [{ title: 'Open', slug: 'open', allow_anonymous_messages: true }],
          },
        ],
      });
      const kept = keptFiles().length;
      const visitor = new Visitor(short, HOST);
      const page = await visitor.replyWithRecording('open', {}, fixture('audio-2s.wav', 'audio/wav'));
      expect(page.status).toBe(422);
      expect(page.html).toContain('A recording is at most 1 second long.');
      expect(keptFiles().length).toBe(kept);
    } finally {
      await short.close();
    }
  });

  it('refuses a file over MEDIA_MAX_BYTES with 413, declared or not', async () => {
    const kept = keptFiles().length;
    const big = made('big.webm', 'video/webm', new Uint8Array(LIMITS.maxBytes + 10));
    const { page } = await send(big);
    expect(page.status).toBe(413);
    expect(page.html).toContain('A recording is at most');
    expect(keptFiles().length).toBe(kept);
  });

  it('refuses an empty file input with nothing else as an empty reply', async () => {
    const { page } = await send(made('empty.webm', 'video/webm', ''));
    expect(page.status).toBe(422);
    expect(page.html).toContain('Write a reply before posting it.');
  });

  it('keeps nothing of a recording sent without the CSRF token, or from another site', async () => {
    const kept = keptFiles().length;
    const visitor = new Visitor(h, HOST);
    await visitor.get('/c/open');
    const noToken = await visitor.postMultipart(
      '/c/open',
      { submit: visitor.hidden('submit') },
      fixture('audio-3s.ogg', 'audio/ogg'),
    );
    expect(noToken.status).toBe(403);
    expect(keptFiles().length).toBe(kept);
  });

  it('refuses a form without its token before its recording: not a byte of it is kept', async () => {
    const backend = diskMedia(mediaDir);
    let puts = 0;
    const store = Object.create(backend.store);
    store.put = (...args: Parameters<typeof backend.store.put>) => {
      puts += 1;
      return backend.store.put(...args);
    };
    const app = secondApp(h, { media: { backend: { ...backend, store }, limits: LIMITS } });
    const visitor = new Visitor({ ...h, app }, HOST);
    await visitor.get('/c/open');
    const submit = visitor.hidden('submit');
    for (const token of [{ submit }, { submit, csrf: 'forged' }] as Record<string, string>[]) {
      const refused = await visitor.postMultipart('/c/open', token, fixture('audio-3s.ogg', 'audio/ogg'));
      expect(refused.status).toBe(403);
      // The rest of the body is still on its way: the connection is not kept.
      expect(refused.headers.get('connection')).toBe('close');
    }
    expect(puts).toBe(0);
    // With its token (which the form sends before the file), the same form keeps it.
    await visitor.get('/c/open');
    const posted = await visitor.postMultipart(
      '/c/open',
      { csrf: visitor.hidden('csrf'), submit: visitor.hidden('submit') },
      fixture('audio-3s.ogg', 'audio/ogg'),
    );
    expect(posted.status).toBe(303);
    expect(puts).toBe(1);
  });

  it('reads eight recordings at once from one client; a ninth is a 429 before a byte is read', async () => {
    const visitor = new Visitor(h, HOST);
    await visitor.get('/c/open');
    const cookie = [...visitor.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    // Bodies that arrive slowly: each opened and kept open until the test lets them end.
    const ends: (() => void)[] = [];
    const slowPost = (ip: string) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(
            new TextEncoder().encode('--x\r\nContent-Disposition: form-data; name="text"\r\n\r\nhi\r\n'),
          );
          ends.push(() => {
            controller.enqueue(new TextEncoder().encode('--x--\r\n'));
            controller.close();
          });
        },
      });
      return h.app.fetch(
        new Request(`${HOST}/c/open`, {
          method: 'POST',
          headers: { cookie, origin: HOST, 'content-type': 'multipart/form-data; boundary=x' },
          body,
          duplex: 'half',
        }),
        { clientIp: ip },
      );
    };
    const held = [1, 2, 3, 4, 5, 6, 7, 8].map(() => slowPost('203.0.113.50'));
    await new Promise((r) => setTimeout(r, 100));
    const ninth = await slowPost('203.0.113.50');
    expect(ninth.status).toBe(429);
    expect(ninth.headers.get('retry-after')).toMatch(/^\d+$/);
    // Another client is not held up by this one.
    const other = slowPost('203.0.113.51');
    for (const end of ends) end();
    for (const res of [...(await Promise.all(held)), await other]) expect(res.status).toBe(403);
  });

  it('answers a private conversation the visitor may not see as missing, keeping nothing', async () => {
    const kept = keptFiles().length;
    const visitor = new Visitor(h, HOST);
    await visitor.get('/c/open');
    const fields = { csrf: visitor.hidden('csrf'), submit: visitor.hidden('submit') };
    const page = await visitor.postMultipart('/c/private', fields, fixture('audio-3s.ogg', 'audio/ogg'));
    expect(page.status).toBe(404);
    expect(keptFiles().length).toBe(kept);
  });
});

describe('serving a recording', () => {
  let publicId: number;
  let privateId: number;
  let bytes: Uint8Array;

  beforeAll(async () => {
    const file = fixture('video-3s.webm', 'video/webm');
    bytes = file.bytes;
    publicId = (await send(file)).id ?? 0;
    // A private conversation's recording, posted through the API's store by its owner's session is
    // more set-up than this needs: the reply store writes it as the page would.
    const [conversation] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute<{ id: number; account_id: number }[]>(`select id, account_id from conversation where slug = 'private'`);
    const key = `${conversation?.account_id}/${'ab'.repeat(16)}`;
    await h.services.media.store.put(key, [bytes], LIMITS.maxBytes);
    const posted = await h.services.replies.insert(conversation?.account_id ?? 0, conversation?.id ?? 0, {
      authorId: null,
      text: '',
      submitKey: null,
      media: { key, kind: 'video', contentType: 'video/webm', bytes: bytes.byteLength, seconds: 3 },
    });
    privateId = posted?.id ?? 0;
  });

  it('answers the bytes with their type, length, a strong ETag, ranges and nosniff', async () => {
    const res = await h.app.fetch(new Request(`${HOST}/media/rec/${publicId}`));
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    expect(res.headers.get('content-type')).toBe('video/webm');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('etag')).toMatch(/^"[^W]/);
    expect(res.headers.get('content-disposition')).toMatch(/^inline/);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    // A public recording plays on any site (an API client's own page), as download_media_url.
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
  });

  it('sends a client this many recordings at once (MEDIA_DOWNLOADS_PER_CLIENT); past it a 429 page', async () => {
    const app = secondApp(
      h,
      { media: { backend: diskMedia(mediaDir), limits: LIMITS } },
      { site: { limits: { downloadsPerClient: 2, downloadsMax: 100 } } },
    );
    const get = (ip: string) => app.fetch(new Request(`${HOST}/media/rec/${publicId}`), { clientIp: ip });
    // Two slow readers (nothing read yet) hold this client's share; a third waits its turn.
    const slow = [await get('198.51.100.7'), await get('198.51.100.7')];
    const third = await get('198.51.100.7');
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(third.headers.get('content-type')).toMatch(/^text\/html/);
    expect(third.headers.get('content-disposition')).toBeNull();
    expect(await third.text()).toContain('Too many');
    // Another client is served; a reader that finishes or goes away gives its place back.
    const other = await get('198.51.100.8');
    expect(other.status).toBe(200);
    expect(new Uint8Array(await other.arrayBuffer())).toEqual(bytes);
    expect(new Uint8Array(await (slow[0] as Response).arrayBuffer())).toEqual(bytes);
    await slow[1]?.body?.cancel();
    for (const next of [await get('198.51.100.7'), await get('198.51.100.7')]) {
      expect(next.status).toBe(200);
      await next.body?.cancel();
    }
    // A HEAD sends no bytes and takes no place.
    const head = await app.fetch(new Request(`${HOST}/media/rec/${publicId}`, { method: 'HEAD' }), {
      clientIp: '198.51.100.7',
    });
    expect(head.status).toBe(200);
  });

  it('answers a Range with 206 and just those bytes; an unsatisfiable one with 416', async () => {
    const part = await h.app.fetch(
      new Request(`${HOST}/media/rec/${publicId}`, { headers: { range: 'bytes=100-199' } }),
    );
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${bytes.byteLength}`);
    expect(part.headers.get('content-length')).toBe('100');
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.slice(100, 200));
    const tail = await h.app.fetch(new Request(`${HOST}/media/rec/${publicId}`, { headers: { range: 'bytes=-10' } }));
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.slice(-10));
    const beyond = await h.app.fetch(
      new Request(`${HOST}/media/rec/${publicId}`, { headers: { range: `bytes=${bytes.byteLength + 5}-` } }),
    );
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${bytes.byteLength}`);
  });

  it('honours If-Range: a stale validator gets the whole recording', async () => {
    const etag = (await h.app.fetch(new Request(`${HOST}/media/rec/${publicId}`))).headers.get('etag') ?? '';
    const fresh = await h.app.fetch(
      new Request(`${HOST}/media/rec/${publicId}`, { headers: { range: 'bytes=0-9', 'if-range': etag } }),
    );
    expect(fresh.status).toBe(206);
    const stale = await h.app.fetch(
      new Request(`${HOST}/media/rec/${publicId}`, { headers: { range: 'bytes=0-9', 'if-range': '"other"' } }),
    );
    expect(stale.status).toBe(200);
    expect(stale.headers.get('content-length')).toBe(String(bytes.byteLength));
    const again = await h.app.fetch(
      new Request(`${HOST}/media/rec/${publicId}`, { headers: { 'if-none-match': etag } }),
    );
    expect(again.status).toBe(304);
  });

  it('behind a proxy that sends recordings (MEDIA_ACCEL_REDIRECT), names where the bytes are, once the reader may have them', async () => {
    const handing = secondApp(h, {}, { site: { recordingsHandOff: '/internal/media/' } });
    const [row] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute<{ media_key: string }[]>(`select media_key from message where id = ?`, [publicId]);
    const handed = await handing.fetch(new Request(`${HOST}/media/rec/${publicId}`));
    expect(handed.status).toBe(200);
    expect(handed.headers.get('x-accel-redirect')).toBe(`/internal/media/${row?.media_key}`);
    expect(handed.headers.get('content-type')).toBe('video/webm');
    expect(handed.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    // The proxy answers ranges and revalidations with its own validator.
    expect(handed.headers.get('etag')).toBeNull();
    expect(handed.headers.get('accept-ranges')).toBeNull();
    expect((await handed.arrayBuffer()).byteLength).toBe(0);
    // Whoever may not have it learns nothing of where it is.
    const refused = await handing.fetch(new Request(`${HOST}/media/rec/${privateId}`));
    expect(refused.status).toBe(404);
    expect(refused.headers.get('x-accel-redirect')).toBeNull();
    const owner = await handing.fetch(new Request(`${HOST}/media/rec/${privateId}`, { headers: auth(TOKEN) }));
    expect(owner.headers.get('x-accel-redirect')).toMatch(/^\/internal\/media\/\d+\/[0-9a-f]{32}$/);
    expect(owner.headers.get('cache-control')).toBe('private, no-cache');
  });

  it('offers it as a download with ?download=1', async () => {
    const res = await h.app.fetch(new Request(`${HOST}/media/rec/${publicId}?download=1`));
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="message-${publicId}.webm"`);
  });

  it("gives a private conversation's recording only to the account's token; anyone else the missing page", async () => {
    const missing = await open(h, `${HOST}/media/rec/999999`);
    const anonymous = await open(h, `${HOST}/media/rec/${privateId}`);
    expect(anonymous.status).toBe(404);
    expect(fingerprint({ ...anonymous, path: '' })).toEqual(fingerprint({ ...missing, path: '' }));
    const foreignToken = await open(h, `${HOST}/media/rec/${privateId}`, { headers: auth(OTHER_TOKEN) });
    expect(foreignToken.status).toBe(404);
    const owner = await h.app.fetch(new Request(`${HOST}/media/rec/${privateId}`, { headers: auth(TOKEN) }));
    expect(owner.status).toBe(200);
    expect(owner.headers.get('cache-control')).toBe('private, no-cache');
    expect(owner.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  });

  it("answers 404 under another account's key or host, and for a message without a recording", async () => {
    expect((await open(h, `${HOST}/media/other/${publicId}`)).status).toBe(404);
    expect((await open(h, `https://other-rec.example.com/media/other/${publicId}`)).status).toBe(404);
    const text = (await messagesOf('open')).find((m) => m.message_type === 'text');
    const none = await h.app.fetch(new Request(`${HOST}/media/rec/${text?.id}`));
    expect(none.status).toBe(404);
    // The missing page is a page like any other, with the pages' policy (its stylesheet loads).
    expect(none.headers.get('content-type')).toMatch(/^text\/html/);
    expect(none.headers.get('content-security-policy')).toContain("style-src 'self'");
  });

  it('plays the recording on the page and in the embed', async () => {
    const page = await new Visitor(h, HOST).get('/c/open');
    // With its conversation's slug: the key an unlisted conversation's recordings need.
    const video = elements(page.html).find(
      (e) => e.tagName === 'video' && attr(e, 'src') === `/media/rec/${publicId}?c=open`,
    );
    expect(video && attr(video, 'controls')).toBeDefined();
    expect(video && attr(video, 'preload')).toBe('metadata');
    expect(page.html).toContain('Video, 0:03');
    expect(page.headers.get('content-security-policy')).toContain("media-src 'self'");
    const embed = await open(h, `${HOST}/embeds/messages/rec/${publicId}`);
    expect(embed.html).toContain(`src="/media/rec/${publicId}?c=open"`);
  });

  it('gives an unlisted public conversation’s recording by its number only with its slug', async () => {
    // `open` is public; unlisted (no search engines), its message numbers reach nothing without its slug.
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`update conversation set allow_search_engines = false where slug = 'open'`);
    try {
      const counted = await open(h, `${HOST}/media/rec/${publicId}`);
      const missing = await open(h, `${HOST}/media/rec/999999`);
      expect(fingerprint({ ...counted, path: '' })).toEqual(fingerprint({ ...missing, path: '' }));
      expect((await open(h, `${HOST}/embeds/messages/rec/${publicId}`)).status).toBe(404);
      // With it (as its pages link it), anyone; the account's token, always.
      expect((await h.app.fetch(new Request(`${HOST}/media/rec/${publicId}?c=OPEN`))).status).toBe(200);
      expect((await open(h, `${HOST}/embeds/messages/rec/${publicId}?c=open`)).status).toBe(200);
      expect((await h.app.fetch(new Request(`${HOST}/media/rec/${publicId}`, { headers: auth(TOKEN) }))).status).toBe(
        200,
      );
      expect((await open(h, `${HOST}/media/rec/${publicId}?c=elsewhere`)).status).toBe(404);
    } finally {
      await h.db.orm.em
        .fork()
        .getConnection()
        .execute(`update conversation set allow_search_engines = true where slug = 'open'`);
    }
  });
});

describe('recordings of people who sign in', () => {
  let site: PeopleSite;
  let dir: string;
  const PEOPLE_HOST = 'https://people-rec.example.com';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'convo-media-people-'));
    site = await openPeopleSite(
      {
        accounts: [
          {
            key: 'prec',
            name: 'People Rec',
            host: PEOPLE_HOST,
            owner: 'olivia@prec.example',
            users: [
              { email: 'olivia@prec.example', name: 'Olivia Owner', team: 'owner' },
              { email: 'mia@prec.example', name: 'Mia Member' },
            ],
            conversations: [
              { title: 'Private', slug: 'private', anyone_can_post: false, members: ['mia@prec.example'] },
              { title: 'Named', slug: 'named', anyone_can_post: true, allow_anonymous_messages: false },
            ],
          },
        ],
      },
      { services: { media: { backend: diskMedia(dir), limits: LIMITS } } },
    );
  });
  afterAll(async () => {
    await site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const files = () => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;

  it('lets a member send one to a private conversation, fetch it, and delete it with its bytes', async () => {
    const mia = await signIn(site, PEOPLE_HOST, 'mia@prec.example');
    const posted = await mia.replyWithRecording('private', { text: 'Listen' }, fixture('audio-3s.ogg', 'audio/ogg'));
    expect(posted.status).toBe(303);
    const id = /#message-(\d+)$/.exec(posted.headers.get('location') ?? '')?.[1];
    expect(files()).toBe(1);
    expect((await mia.get(`/media/prec/${id}`)).status).toBe(200);
    expect((await new Visitor(site.h, PEOPLE_HOST).get(`/media/prec/${id}`)).status).toBe(404);

    await mia.get('/c/private');
    const deleted = await mia.post(`/c/private/messages/${id}`, { csrf: mia.hidden('csrf'), action: 'delete' });
    expect(deleted.status).toBe(303);
    expect(files()).toBe(0);
    expect((await mia.get(`/media/prec/${id}`)).status).toBe(404);
  });

  it('keeps a video’s poster beside it for whoever may play it, refuses one that is no JPEG, and deletes it with it', async () => {
    // The smallest JPEG there is: start of image, a comment, end of image.
    const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xfe, 0x00, 0x04, 0x68, 0x69, 0xff, 0xd9]);
    const poster = `data:image/jpeg;base64,${Buffer.from(jpeg).toString('base64')}`;
    const mia = await signIn(site, PEOPLE_HOST, 'mia@prec.example');
    const before = files();
    for (const bad of [
      `data:image/png;base64,${Buffer.from(jpeg).toString('base64')}`,
      `data:image/jpeg;base64,${Buffer.from('<svg onload=alert(1)>').toString('base64')}`,
      `data:image/jpeg;base64,${Buffer.concat([Buffer.from(jpeg), Buffer.alloc(45 * 1024, 0xff), Buffer.from([0xff, 0xd9])]).toString('base64')}`,
      'not a data url',
    ]) {
      const refused = await mia.replyWithRecording(
        'private',
        { text: 'Look', poster: bad },
        fixture('video-3s.webm', 'video/webm'),
      );
      expect(refused.status, bad.slice(0, 30)).toBe(422);
      expect(refused.html).toContain('poster is not a JPEG image');
    }
    expect(files()).toBe(before);

    const posted = await mia.replyWithRecording(
      'private',
      { text: 'Look', poster },
      fixture('video-3s.webm', 'video/webm'),
    );
    expect(posted.status).toBe(303);
    const id = /#message-(\d+)$/.exec(posted.headers.get('location') ?? '')?.[1];
    expect(files()).toBe(before + 2);
    const page = await mia.get('/c/private');
    expect(page.html).toContain(`poster="/media/prec/${id}/poster?c=private"`);
    const still = await mia.get(`/media/prec/${id}/poster`);
    expect(still.status).toBe(200);
    expect(still.headers.get('content-type')).toBe('image/jpeg');
    expect(still.headers.get('content-length')).toBe(String(jpeg.length));
    expect(still.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    // Nobody else: a visitor, another account's host.
    expect((await new Visitor(site.h, PEOPLE_HOST).get(`/media/prec/${id}/poster`)).status).toBe(404);
    // A recording without one has none (the page names none, the address is the 404).
    const plain = await mia.replyWithRecording('private', { text: 'No still' }, fixture('video-3s.webm', 'video/webm'));
    const plainId = /#message-(\d+)$/.exec(plain.headers.get('location') ?? '')?.[1];
    expect((await mia.get('/c/private')).html).not.toContain(`/media/prec/${plainId}/poster`);
    expect((await mia.get(`/media/prec/${plainId}/poster`)).status).toBe(404);

    await mia.get('/c/private');
    const deleted = await mia.post(`/c/private/messages/${id}`, { csrf: mia.hidden('csrf'), action: 'delete' });
    expect(deleted.status).toBe(303);
    expect((await mia.get(`/media/prec/${id}/poster`)).status).toBe(404);
    expect(files()).toBe(before + 1);
  });

  it("keeps a named reply's recording until its link is confirmed, then posts both", async () => {
    const visitor = new Visitor(site.h, PEOPLE_HOST);
    const waiting = await visitor.replyWithRecording(
      'named',
      { name: 'Nina New', email: 'nina@elsewhere.example' },
      fixture('video-3s.webm', 'video/webm'),
    );
    expect(waiting.status).toBe(200);
    expect(waiting.html).toContain('Check your e-mail');
    // The page she waits on leads back to the conversation.
    expect(waiting.html).toContain('<a href="/c/named">Back to the conversation</a>');
    const mail = await mailTo(site.mailbox, 'nina@elsewhere.example', /video recording of 3 s/);
    // The link's page says what waits: no empty quote for a recording without words.
    const confirming = await new Visitor(site.h, PEOPLE_HOST).get(new URL(signInLink(mail)).pathname);
    expect(confirming.html).toContain('With a video recording of 3 seconds.');
    expect(confirming.html).not.toContain('<blockquote');
    await visitor.confirm(signInLink(mail), { name: 'Nina New' });
    const page = await visitor.get('/c/named');
    expect(page.html).toMatch(/<video[^>]+src="\/media\/prec\/\d+\?c=named"/);
  });
});

/** Runs `test` with a media store in a folder of its own, removed after. */
async function inStore(test: (store: DiskMediaStore) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'convo-probe-'));
  try {
    await test(new DiskMediaStore(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `store` with the reads of the keys `slow` names held `ms` each (as a file built to keep the
 * probe busy is); `reads` counts the slow ones under way.
 */
function slowReads(store: DiskMediaStore, slow: (key: string) => boolean, ms: number, reads = { now: 0, most: 0 }) {
  const slowed: DiskMediaStore = Object.create(store);
  slowed.read = (key: string, start: number, end: number) =>
    new ReadableStream<Uint8Array>({
      async start(controller) {
        if (slow(key)) {
          reads.now += 1;
          reads.most = Math.max(reads.most, reads.now);
          await new Promise((r) => setTimeout(r, ms));
          reads.now -= 1;
        }
        controller.enqueue(new Uint8Array(await new Response(store.read(key, start, end)).arrayBuffer()));
        controller.close();
      },
    });
  return slowed;
}

/** Probes of `size`-byte files, noting whose were measured, in the order they were. */
function inOrder(probe: MediabunnyProbe, store: DiskMediaStore, size: number) {
  const done: string[] = [];
  const measure = (key: string, sender: string) =>
    probe.probe(store, key, size, sender).then((o) => {
      done.push(sender);
      return o;
    });
  return { done, measure };
}

describe('the probe', () => {
  it('refuses a file whose metadata asks for more than 16 MB at once, reading none of it', async () => {
    await inStore(async (store) => {
      // A real M4A whose last box (moov) is made to hold a 20 MB 'free' box: the demuxer reads a
      // moov whole, so it asks for 20 MB in one read.
      const m4a = new Uint8Array(readFileSync(join(FIXTURES, 'audio-3s.m4a')));
      const view = new DataView(m4a.buffer, m4a.byteOffset);
      let at = 0;
      let moov = -1;
      while (at < m4a.byteLength) {
        if (new TextDecoder().decode(m4a.subarray(at + 4, at + 8)) === 'moov') moov = at;
        at += view.getUint32(at);
      }
      expect(moov).toBeGreaterThan(0);
      const padding = 20 * 1024 * 1024;
      view.setUint32(moov, view.getUint32(moov) + padding + 8);
      const free = new Uint8Array(8);
      new DataView(free.buffer).setUint32(0, padding + 8);
      free.set(new TextEncoder().encode('free'), 4);
      const key = `1/${'ab'.repeat(16)}`;
      const chunk = new Uint8Array(1024 * 1024);
      await store.put(key, [m4a, free, ...Array.from({ length: 20 }, () => chunk)], 64 * 1024 * 1024);
      const size = m4a.byteLength + 8 + padding;
      // What the probe reads from the store, counted as it streams.
      let read = 0;
      const counting = Object.create(store);
      counting.read = (k: string, start: number, end: number) =>
        store.read(k, start, end).pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(c, controller) {
              read += c.byteLength;
              controller.enqueue(c);
            },
          }),
        );
      const outcome = await new MediabunnyProbe().probe(counting, key, size);
      expect(outcome).toEqual({ ok: false, problem: expect.stringMatching(/metadata is over 16 MB/) });
      expect(read).toBeLessThan(PROBE_READ_MAX_BYTES);
      // The plain file still measures.
      const plainKey = `1/${'cd'.repeat(16)}`;
      const plain = new Uint8Array(readFileSync(join(FIXTURES, 'audio-3s.m4a')));
      await store.put(plainKey, [plain], LIMITS.maxBytes);
      expect(await new MediabunnyProbe().probe(store, plainKey, plain.byteLength)).toMatchObject({ ok: true });
    });
  });

  it('measures in a thread of its own, bounded in time: past the bound it refuses, and the next probe still works', async () => {
    await inStore(async (store) => {
      const key = `1/${'ef'.repeat(16)}`;
      const bytes = readFileSync(join(FIXTURES, 'video-3s.webm'));
      await store.put(key, [bytes], LIMITS.maxBytes);
      const hurried = new MediabunnyProbe({ timeoutMs: 1 });
      expect(await hurried.probe(store, key, bytes.byteLength)).toEqual({
        ok: false,
        problem: 'That recording could not be measured in time.',
      });
      // Its thread was stopped; a probe given time measures, two at once in turn.
      const patient = new MediabunnyProbe();
      const [first, second] = await Promise.all([
        patient.probe(store, key, bytes.byteLength),
        patient.probe(store, key, bytes.byteLength),
      ]);
      expect(first).toMatchObject({ ok: true, media: { contentType: 'video/webm', hasVideo: true } });
      expect(second).toEqual(first);
    });
  });

  it('takes senders in turn and answers busy past its queue, so one sender’s files wait behind their own', async () => {
    await inStore(async (store) => {
      const bytes = readFileSync(join(FIXTURES, 'video-3s.webm'));
      // One sender's files: one measured and PROBE_QUEUE_PER_SENDER waiting; then one too many,
      // and another sender's.
      const heavyCount = 1 + PROBE_QUEUE_PER_SENDER;
      const keys = Array.from({ length: heavyCount + 2 }, (_, i) => `1/${String(i).padStart(32, '0')}`);
      for (const key of keys) await store.put(key, [bytes], LIMITS.maxBytes);
      // The heavy sender's files are slow to read (as a file built to keep the probe busy is).
      const slow = slowReads(store, (key) => keys.indexOf(key) < heavyCount, 100);
      const probe = new MediabunnyProbe({ threads: 1 });
      const { done, measure } = inOrder(probe, slow, bytes.byteLength);
      const heavy = keys.slice(0, heavyCount).map((key) => measure(key, 'heavy'));
      // One being measured and its share waiting: its next is answered busy at once, measured not.
      expect(await probe.probe(slow, keys[heavyCount] ?? '', bytes.byteLength, 'heavy')).toMatchObject({
        ok: false,
        busy: true,
      });
      const light = measure(keys[heavyCount + 1] ?? '', 'light');
      for (const outcome of [...(await Promise.all(heavy)), await light]) expect(outcome.ok).toBe(true);
      // The light sender came after all of the heavy one's, and was measured second.
      expect(done[1]).toBe('light');
    });
  });

  it('measures on several threads, one sender on all but one: another’s recording is not kept waiting', async () => {
    await inStore(async (store) => {
      const bytes = readFileSync(join(FIXTURES, 'video-3s.webm'));
      const keys = Array.from({ length: 4 }, (_, i) => `1/${String(i).padStart(32, '0')}`);
      for (const key of keys) await store.put(key, [bytes], LIMITS.maxBytes);
      // The heavy sender's three files are slow to read; the light sender's one is not. The
      // heavy reads under way at once are counted. Slow enough (1.5 s) that a loaded machine's
      // thread start cannot let a heavy read finish before the light one is measured.
      const reads = { now: 0, most: 0 };
      const slow = slowReads(store, (key) => key !== keys[3], 1_500, reads);
      const probe = new MediabunnyProbe({ threads: 3 });
      const { done, measure } = inOrder(probe, slow, bytes.byteLength);
      const heavy = keys.slice(0, 3).map((key) => measure(key, 'heavy'));
      const light = measure(keys[3] ?? '', 'light');
      for (const outcome of [...(await Promise.all(heavy)), await light]) expect(outcome.ok).toBe(true);
      // The heavy sender was measured on two threads at once, never three; the third thread
      // measured the light one's at once, first.
      expect(reads.most).toBe(2);
      expect(done[0]).toBe('light');
    });
  });

  it('scans no frame past the longest recording accepted: a file of tiny frames stops there', async () => {
    await inStore(async (store) => {
      // 10 MB of one 72-byte MP3 frame (MPEG 2.5 layer III, 8 kHz, 8 kb/s, mono, 72 ms) repeated:
      // 145,000 frames, nearly 3 hours, that a demuxer must walk one by one to time.
      const frame = new Uint8Array(72);
      frame.set([0xff, 0xe3, 0x18, 0xc0]);
      const frames = Math.floor((10 * 1024 * 1024) / 72);
      const key = `1/${'ab'.repeat(16)}`;
      await store.put(
        key,
        Array.from({ length: frames }, () => frame),
        16 * 1024 * 1024,
      );
      let read = 0;
      const counting = Object.create(store);
      counting.read = (k: string, start: number, end: number) => {
        read += end + 1 - start;
        return store.read(k, start, end);
      };
      const outcome = await new MediabunnyProbe({ maxSeconds: 600 }).probe(counting, key, frames * 72);
      // Measured as far as it needs: past 10 minutes, which the site refuses as too long.
      if (!outcome.ok) throw new Error(outcome.problem);
      expect(outcome.media.seconds).toBeGreaterThan(600.5);
      expect(mediaVerdict(outcome.media, 'audio', { maxSeconds: 600, maxBytes: 1e9 })).toEqual({
        ok: false,
        problem: 'A recording is at most 10 minutes long.',
      });
      // About 8,300 frames (600 KB) read, not the 10 MB.
      expect(read).toBeLessThan(2 * 1024 * 1024);
    });
  });
});

describe('recordings on disk', () => {
  it('are readable by the server’s user only: files 0600 in folders 0700, uploads too', async () => {
    const [row] = await h.db.orm.em.fork().getConnection().execute(`select id from account where key = 'rec'`);
    const key = `${row.id}/${'0d'.repeat(16)}`;
    await h.services.media.store.put(key, [new Uint8Array([1, 2, 3])], LIMITS.maxBytes);
    const mode = (path: string) => statSync(path).mode & 0o777;
    expect(mode(join(mediaDir, key))).toBe(0o600);
    expect(mode(join(mediaDir, String(row.id)))).toBe(0o700);
    expect(mode(mediaDir)).toBe(0o700);
    expect(mode(join(mediaDir, 'uploads'))).toBe(0o700);
    await h.services.media.store.remove(key);
  });
});

describe('recordings nothing wants', () => {
  it('are removed once a day old: a lost upload, and a reply whose link expired; kept while wanted', async () => {
    const [row] = await h.db.orm.em.fork().getConnection().execute(`select id from account where key = 'rec'`);
    const orphan = `${row.id}/${'0f'.repeat(16)}`;
    await h.services.media.store.put(orphan, [new Uint8Array([1, 2, 3])], LIMITS.maxBytes);
    // A poster of a recording a message holds stays with it; one whose recording nothing holds goes.
    const [held] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`select media_key from message where media_key is not null limit 1`);
    await h.services.media.store.put(posterKey(held.media_key), [new Uint8Array([0xff, 0xd8])], LIMITS.maxBytes);
    await h.services.media.store.put(posterKey(orphan), [new Uint8Array([0xff, 0xd8])], LIMITS.maxBytes);
    // A reply under a name and an address: its recording waits for the mailed link.
    const waiting = await send(fixture('audio-3s.ogg', 'audio/ogg'), { name: 'Wanda', email: 'wanda@else.example' });
    expect(waiting.page.html).toContain('Check your e-mail');
    const files = () => keptFiles().map((e) => join(e.parentPath, e.name));
    const before = files();
    // Everything kept is two days old now.
    const old = new Date(Date.now() - 48 * 3600_000);
    for (const file of before) utimesSync(file, old, old);
    const references = new PgMediaReferences(h.db.orm.em.fork());
    // A recording a crash cut off while it was written: its `.part`, a day old, goes too.
    const cut = join(mediaDir, `${row.id}/${'0e'.repeat(16)}.part`);
    writeFileSync(cut, new Uint8Array(10));
    utimesSync(cut, old, old);
    expect(await sweepRecordings({ store: h.services.media.store, references })).toBe(3);
    expect(existsSync(cut)).toBe(false);
    const orphanName = orphan.split('/')[1] ?? '';
    expect(files()).toEqual(before.filter((f) => !f.endsWith(orphanName) && !f.endsWith(`${orphanName}.poster`)));
    expect(await h.services.media.store.size(posterKey(held.media_key))).toBe(2);
    await h.services.media.store.remove(posterKey(held.media_key));
    // The link expires unconfirmed: its recording goes at the next sweep; the messages' stay.
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`update sign_in_link set expires_at = now() - interval '1 minute'`);
    expect(await sweepRecordings({ store: h.services.media.store, references })).toBe(1);
    const [posted] = await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int as n from message where media_key is not null`);
    expect(files().length).toBe(posted.n);
  });
});
