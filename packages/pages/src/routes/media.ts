import { MEDIA_EXTENSIONS, openRecording } from '@convo/domain';
import { Hono } from 'hono';
import parseRange from 'range-parser';
import { type SiteEnv, viewerOf } from '../env.ts';
import { notFound } from '../frame.ts';
import { passOf } from '../passes.ts';
import type { SiteKit } from '../posting.ts';

/**
 * A message's recording (`download_media_url`): its bytes as the probe typed them, never as a page,
 * with byte ranges for players that seek (`206`, `If-Range`), a strong ETag (a recording never
 * changes: its key is new for every upload), and `?download=1` to save it. Whoever may not see the
 * message gets the site's 404, the same as for a message that does not exist.
 */
export function mediaRoutes({ deps }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  routes.get('/media/:accountKey/:messageId', async (c) => {
    const account = c.env.account;
    const id = c.req.param('messageId');
    if (c.req.param('accountKey') !== account.key || !/^\d{1,9}$/.test(id)) return notFound(c);
    const viewer = viewerOf(c);
    const grants = viewer ? null : await passOf(deps, c);
    const found = await openRecording(deps, account, Number(id), {
      viewer,
      authorization: c.req.header('authorization'),
      pass: async (conversationId) =>
        grants?.has(conversationId) ? { userId: grants.get(conversationId) ?? null } : null,
    });
    if (!found) return notFound(c);

    const download = c.req.query('download') === '1';
    const extension = MEDIA_EXTENSIONS[found.contentType] ?? 'bin';
    const disposition = `${download ? 'attachment' : 'inline'}; filename="message-${id}.${extension}"`;
    // Object storage serves the bytes itself, once the server has checked who may have them: a
    // link of a few minutes, never kept by a cache (the next reader is checked again).
    const store = deps.media.store;
    if (store.link) {
      c.header('cache-control', 'private, no-store');
      return c.redirect(await store.link(found.key, { contentType: found.contentType, disposition }), 302);
    }

    const size = found.bytes;
    const etag = `"${found.key.replace('/', '-')}"`;
    c.header('content-type', found.contentType);
    c.header('accept-ranges', 'bytes');
    c.header('etag', etag);
    c.header('content-disposition', disposition);
    // Anyone's copy may be kept for a while; a private one's only by the reader's own browser,
    // which asks again (If-None-Match) before using it.
    c.header('cache-control', found.conversation.anyoneCanPost ? 'public, max-age=3600' : 'private, no-cache');
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
  });

  return routes;
}
