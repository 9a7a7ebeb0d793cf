import {
  INTAKE_PAGE_KEY_PATTERN,
  MEDIA_EXTENSIONS,
  type MessageMedia,
  openRecording,
  posterKey,
  webVtt,
} from '@convo/domain';
import { Hono } from 'hono';
import parseRange from 'range-parser';
import { notFound, tooMany } from '../frame.ts';
import { passOf, passReader } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import { type SiteContext, type SiteEnv, viewerOf } from '../request.ts';

/** What serve() says of a recording before its bytes: taken back when they are refused. */
const RECORDING_HEADERS = [
  'content-type',
  'accept-ranges',
  'etag',
  'content-disposition',
  'cache-control',
  'content-length',
  'content-range',
  'cross-origin-resource-policy',
];

/** When a client at its share of recordings at once may ask again. */
const DOWNLOAD_RETRY_SECONDS = 5;

/**
 * A message's recording (`download_media_url`), never as a page: whoever may not see the message
 * gets the site's 404, the same as for a message that does not exist. And an intake page's
 * welcome recording, which is as public as the page.
 */
export function mediaRoutes({ deps }: SiteKit) {
  const routes = new Hono<SiteEnv>();
  const downloads = new Downloads(deps.rates.downloadsPerClient, deps.rates.downloadsMax);

  /**
   * A kept recording's bytes as the probe typed them, with byte ranges for players that seek
   * (`206`, `If-Range`), a strong ETag (a recording never changes: its key is new for every
   * upload), and `?download=1` to save it; from object storage, a short link to it instead.
   */
  async function serve(c: SiteContext, found: MessageMedia, name: string, anyoneFor: number | null) {
    // Anyone's copy may be kept for `anyoneFor` seconds; a private one's only by the reader's own
    // browser, which asks again (If-None-Match) before using it.
    const cache = anyoneFor !== null ? `public, max-age=${anyoneFor}` : 'private, no-cache';
    const download = c.req.query('download') === '1';
    const extension = MEDIA_EXTENSIONS[found.contentType] ?? 'bin';
    const disposition = `${download ? 'attachment' : 'inline'}; filename="${name}.${extension}"`;
    // Object storage serves the bytes itself, once the server has checked who may have them: a
    // link of a few minutes, never kept by a cache (the next reader is checked again).
    const store = deps.media.store;
    if (store.link) {
      c.header('cache-control', 'private, no-store');
      return c.redirect(await store.link(found.key, { contentType: found.contentType, disposition }), 302);
    }

    // A recording anyone may see plays on any site (an API client's own page, another's player);
    // a private one only on the account's own pages.
    c.header('cross-origin-resource-policy', anyoneFor !== null ? 'cross-origin' : 'same-origin');
    c.header('content-type', found.contentType);
    c.header('content-disposition', disposition);
    c.header('cache-control', cache);
    // Behind a proxy that serves recordings itself, it is told where the bytes are once the
    // reader was let in; it answers ranges and revalidations (with its own ETag) from there.
    if (deps.recordingsHandOff) {
      c.header('x-accel-redirect', `${deps.recordingsHandOff}${await store.handOffPath(found.key)}`);
      return c.body(null, 200);
    }

    const size = found.bytes;
    const etag = `"${found.key.replace('/', '-')}"`;
    c.header('accept-ranges', 'bytes');
    c.header('etag', etag);
    if (
      c.req
        .header('if-none-match')
        ?.split(/\s*,\s*/)
        .includes(etag)
    )
      return c.body(null, 304);

    // A Range is answered when it is one satisfiable range, and If-Range (if sent) names these bytes.
    const asked = c.req.header('range');
    const ifRange = c.req.header('if-range');
    const ranges =
      asked && (ifRange === undefined || ifRange === etag) ? parseRange(size, asked, { combine: true }) : -2;
    if (ranges === -1) {
      c.header('content-range', `bytes */${size}`);
      return c.body(null, 416);
    }
    if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1 && ranges[0]) {
      const { start, end } = ranges[0];
      c.header('content-range', `bytes ${start}-${end}/${size}`);
      c.header('content-length', String(end - start + 1));
      if (c.req.method === 'HEAD') return c.body(null, 206);
      return bytes(c, found.key, start, end, 206);
    }
    c.header('content-length', String(size));
    if (size === 0 || c.req.method === 'HEAD') return c.body(null, 200);
    return bytes(c, found.key, 0, size - 1, 200);
  }

  /** The bytes, within the client's and the process's share of answers streaming at once. */
  function bytes(c: SiteContext, key: string, start: number, end: number, status: 200 | 206) {
    const release = downloads.take(c.env.visit.clientIp);
    if (!release) {
      // The page that says so, without what was said of the recording.
      for (const name of RECORDING_HEADERS) c.header(name, undefined);
      return tooMany(c, DOWNLOAD_RETRY_SECONDS, 'Too many recordings at once');
    }
    return c.body(deps.media.store.read(key, start, end, release), status);
  }

  /** The message's recording, when the reader may have it (else null: the 404). */
  async function recordingFor(c: SiteContext): Promise<MessageMedia | null> {
    const account = c.env.account;
    const id = c.req.param('messageId') ?? '';
    if (c.req.param('accountKey') !== account.key || !/^\d{1,9}$/.test(id)) return null;
    const viewer = viewerOf(c);
    const grants = viewer ? null : await passOf(deps, c);
    return openRecording(deps, account, Number(id), {
      viewer,
      authorization: c.req.header('authorization'),
      // Its number can be counted: an unlisted conversation's recording needs its slug (`?c=`) too.
      slug: c.req.query('c'),
      pass: (conversation) => (grants ? passReader(grants, conversation) : null),
    });
  }

  routes.get('/media/:accountKey/:messageId', async (c) => {
    const found = await recordingFor(c);
    if (!found) return notFound(c);
    // A public conversation's recording may be kept by any cache; an internal note's never.
    const open = found.conversation.anyoneCanPost && !found.internal;
    return serve(c, found, `message-${c.req.param('messageId')}`, open ? 3600 : null);
  });

  // An intake page's welcome recording: public, as the page that shows it.
  routes.get('/media/:accountKey/welcome/:key', async (c) => {
    const account = c.env.account;
    const key = c.req.param('key');
    if (c.req.param('accountKey') !== account.key || !INTAKE_PAGE_KEY_PATTERN.test(key.toLowerCase()))
      return notFound(c);
    const welcome = (await deps.intake.page(account.id, key))?.welcomeRecording;
    const found = welcome ? await deps.site.mediaOf(account.id, welcome.messageId) : null;
    return found ? serve(c, found, `welcome-${key}`, 300) : notFound(c);
  });

  // A recording's poster (after the welcome route: a page keyed `poster` is a welcome): for
  // whoever may play the recording, the 404 for everyone else (and where it has none). A still of a few dozen KB: sent whole, from the store or its link.
  routes.get('/media/:accountKey/:messageId/poster', async (c) => {
    const found = await recordingFor(c);
    const key = found ? posterKey(found.key) : null;
    const size = key ? await deps.media.store.size(key).catch(() => null) : null;
    if (!found || !key || !size) return notFound(c);
    const store = deps.media.store;
    if (store.link) {
      c.header('cache-control', 'private, no-store');
      return c.redirect(
        await store.link(key, { contentType: 'image/jpeg', disposition: 'inline; filename="poster.jpg"' }),
        302,
      );
    }
    const open = found.conversation.anyoneCanPost && !found.internal;
    c.header('content-type', 'image/jpeg');
    c.header('content-length', String(size));
    c.header('cache-control', open ? 'public, max-age=3600' : 'private, no-cache');
    c.header('cross-origin-resource-policy', open ? 'cross-origin' : 'same-origin');
    c.header('etag', `"${key.replace('/', '-')}"`);
    if (c.req.method === 'HEAD') return c.body(null, 200);
    return c.body(store.read(key, 0, size - 1), 200);
  });

  // A recording's captions (its transcript as WebVTT, for the player's <track>): for whoever may
  // play the recording; the 404 for everyone else, and until its transcript is made.
  routes.get('/media/:accountKey/:messageId/captions.vtt', async (c) => {
    const found = await recordingFor(c);
    const id = Number(c.req.param('messageId'));
    const transcript = found ? (await deps.transcripts.byMessages(c.env.account.id, [id])).get(id) : undefined;
    if (!found || transcript?.status !== 'complete') return notFound(c);
    const open = found.conversation.anyoneCanPost && !found.internal;
    return c.body(webVtt(transcript.segments), 200, {
      'content-type': 'text/vtt; charset=utf-8',
      // The team may correct it: a cache asks again after a minute at most.
      'cache-control': open ? 'public, max-age=60' : 'private, no-cache',
      'cross-origin-resource-policy': open ? 'cross-origin' : 'same-origin',
      'x-content-type-options': 'nosniff',
    });
  });

  return routes;
}

/**
 * Recordings being sent at once (`MEDIA_DOWNLOADS_PER_CLIENT` per client, `MEDIA_DOWNLOADS_MAX`
 * per process): each holds up to two chunks of its file in memory while its reader is slow, so
 * 1,000 slow readers from one address are refused, not 500 MB held.
 */
class Downloads {
  readonly #perClient: number;
  readonly #max: number;
  readonly #held = new Map<string, number>();
  #total = 0;

  constructor(perClient: number, max: number) {
    this.#perClient = perClient;
    this.#max = max;
  }

  /** A place for one answer to `client`, and how to give it back (once); null when none is free. */
  take(client: string): (() => void) | null {
    const held = this.#held.get(client) ?? 0;
    if ((this.#perClient > 0 && held >= this.#perClient) || (this.#max > 0 && this.#total >= this.#max)) return null;
    this.#held.set(client, held + 1);
    this.#total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#total -= 1;
      const left = (this.#held.get(client) ?? 1) - 1;
      if (left > 0) this.#held.set(client, left);
      else this.#held.delete(client);
    };
  }
}
