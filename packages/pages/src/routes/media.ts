import { INTAKE_PAGE_KEY_PATTERN, MEDIA_EXTENSIONS, type MessageMedia, openRecording } from '@convo/domain';
import { Hono } from 'hono';
import parseRange from 'range-parser';
import { type SiteContext, type SiteEnv, viewerOf } from '../env.ts';
import { notFound } from '../frame.ts';
import { passOf, passReader } from '../passes.ts';
import type { SiteKit } from '../posting.ts';

/**
 * A message's recording (`download_media_url`), never as a page: whoever may not see the message
 * gets the site's 404, the same as for a message that does not exist. And an intake page's
 * welcome recording, which is as public as the page.
 */
export function mediaRoutes({ deps }: SiteKit) {
  const routes = new Hono<SiteEnv>();

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

    const size = found.bytes;
    const etag = `"${found.key.replace('/', '-')}"`;
    // A recording anyone may see plays on any site (an API client's own page, another's player);
    // a private one only on the account's own pages.
    c.header('cross-origin-resource-policy', anyoneFor !== null ? 'cross-origin' : 'same-origin');
    c.header('content-type', found.contentType);
    c.header('accept-ranges', 'bytes');
    c.header('etag', etag);
    c.header('content-disposition', disposition);
    c.header('cache-control', cache);
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
      return c.body(store.read(found.key, start, end), 206);
    }
    c.header('content-length', String(size));
    if (size === 0 || c.req.method === 'HEAD') return c.body(null, 200);
    return c.body(store.read(found.key, 0, size - 1), 200);
  }

  routes.get('/media/:accountKey/:messageId', async (c) => {
    const account = c.env.account;
    const id = c.req.param('messageId');
    if (c.req.param('accountKey') !== account.key || !/^\d{1,9}$/.test(id)) return notFound(c);
    const viewer = viewerOf(c);
    const grants = viewer ? null : await passOf(deps, c);
    const found = await openRecording(deps, account, Number(id), {
      viewer,
      authorization: c.req.header('authorization'),
      pass: (conversation) => (grants ? passReader(grants, conversation) : null),
    });
    if (!found) return notFound(c);
    return serve(c, found, `message-${id}`, found.conversation.anyoneCanPost ? 3600 : null);
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

  return routes;
}
