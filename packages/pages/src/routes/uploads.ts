import { replyTarget, UPLOAD_ID } from '@convo/domain';
import { Hono } from 'hono';
import { uploadVisitor } from '../cookies.ts';
import { readerOf } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import type { SiteContext, SiteEnv } from '../request.ts';

/**
 * Resumable uploads of recordings (tus 1.0): the reply form's recorder sends its recording here
 * while the person reviews it, and the form then names the finished upload (`upload`). Each
 * upload belongs to this visitor's cookie and to one conversation they may reply to, checked when
 * it is made and again when the form turns it into a message.
 */
export function uploadRoutes({ deps, posting }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  /** Why this request may not reach the uploads (plain words, as a tus client shows them), or null. */
  function refusal(c: SiteContext): Response | null {
    // Only the site's own pages change uploads: the browser says so (Origin or Sec-Fetch-Site).
    const ownPage = c.req.header('origin') === c.env.account.host || c.req.header('sec-fetch-site') === 'same-origin';
    if (c.req.method !== 'HEAD' && !ownPage) return c.text('Uploads are made from this site’s own pages.', 403);
    if (!c.var.csrf) return c.text('Your browser did not send its cookie: reload the page and record again.', 403);
    return null;
  }

  // The tus 1.0 core protocol's discovery: which version, extensions and size the server takes
  // (Tus-Version, Tus-Extension, Tus-Max-Size), for anyone; it reaches no upload.
  const discovery = (c: SiteContext) =>
    deps.uploads.handle(c.req.raw, uploadVisitor(c.env.account.id, c.var.csrf), async () => ({
      status: 400,
      message: 'Uploads are made at /uploads.',
    }));
  routes.options('/uploads', discovery);
  routes.options('/uploads/', discovery);

  routes.post('/uploads', async (c) => {
    const refused = refusal(c);
    if (refused) return refused;
    const limited = await posting.overLimit(c, `ip:${c.env.visit.clientIp}`, deps.rates.perIpPerMinute, 60);
    if (limited) return limited;
    const account = c.env.account;
    const answer = await deps.uploads.handle(c.req.raw, uploadVisitor(account.id, c.var.csrf), async (metadata) => {
      if (metadata.csrf !== c.var.csrf) {
        return { status: 403, message: 'This page has expired: reload it and record again.' };
      }
      try {
        const reader = await readerOf(deps, c, metadata.conversation ?? '');
        const slug = metadata.conversation ?? '';
        const conversation = await replyTarget(deps, account, slug, reader.viewer, reader.granted);
        return conversation?.id ?? { status: 404, message: 'There is no such conversation to reply to.' };
      } catch (err) {
        // The database cannot answer just now: a 503 the recorder retries, as the pages answer.
        if (!deps.isUnavailable(err)) throw err;
        return { status: 503, message: 'Recordings cannot be taken just now: try again in a moment.' };
      }
    });
    if (answer.status !== 503 || answer.headers.has('retry-after')) return answer;
    const headers = new Headers(answer.headers);
    headers.set('retry-after', '1');
    return new Response(answer.body, { status: answer.status, headers });
  });

  /** HEAD (the offset to resume from), PATCH (more bytes), DELETE (given up) on one upload. */
  const onUpload = async (c: SiteContext) => {
    if (!UPLOAD_ID.test(c.req.param('id') ?? '')) return c.text('There is no such upload.', 404);
    const refused = refusal(c);
    if (refused) return refused;
    return deps.uploads.handle(c.req.raw, uploadVisitor(c.env.account.id, c.var.csrf), async () => ({
      status: 400,
      message: 'Uploads are made at /uploads.',
    }));
  };
  // Hono answers HEAD through the GET route; an upload's bytes are never read back with GET.
  routes.get('/uploads/:id', (c) =>
    c.req.method === 'HEAD'
      ? onUpload(c)
      : c.text('An upload is not read back.', 405, { allow: 'HEAD, PATCH, DELETE' }),
  );
  routes.on(['PATCH', 'DELETE'], '/uploads/:id', onUpload);

  return routes;
}
