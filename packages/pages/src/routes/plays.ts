import { createHash } from 'node:crypto';
import { type PageMessageRecord, playsShown, recordPlay, reportsPlay, type Viewer, viewMessage } from '@convo/domain';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { notFound } from '../frame.ts';
import { passOf, passReader, readerOf } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import { type SiteContext, type SiteEnv, viewerOf } from '../request.ts';
import { type ConversationDisplay, receipt } from '../views/conversation.ts';

/*
 * Played receipts (docs/pages.md, "Played receipts"). A page's player reports a play once it
 * has played long enough (site.js: a small same-origin POST with the page's CSRF token, at that
 * moment), to `/c/<slug>/messages/<id>/played`; the same address read answers the receipt
 * ("Played by Pat and 2 visitors") to those who see it, for a live update. Without JavaScript no
 * play is reported: a page alone cannot tell that a recording played.
 */

const MESSAGE_ID = /^[1-9]\d{0,9}$/;

/** What a page shows of receipts to this reader (`viewer`, as the page's rule reads them) among `messages`. */
export async function playedDisplay(
  { deps }: SiteKit,
  c: SiteContext,
  viewer: Viewer,
  messages: readonly PageMessageRecord[],
): Promise<NonNullable<ConversationDisplay['played']>> {
  return {
    csrf: c.var.csrf,
    beacon: reportsPlay(viewer),
    receipts: await playsShown(deps, c.env.account.id, viewer, messages),
  };
}

export function playRoutes({ deps, posting }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  // The beacon: counted once per message and session (the session's cookie, by a hash of its
  // token), within its own per-address limit; answered 204 whether or not it was counted.
  routes.post('/c/:slug/messages/:id/played', posting.sameOrigin, async (c) => {
    const id = c.req.param('id');
    if (!MESSAGE_ID.test(id)) return notFound(c);
    const fields = await posting.readPost(c, undefined, {
      name: 'play',
      perMinute: deps.rates.playsPerIpPerMinute,
    });
    if (fields instanceof Response) return fields;
    const viewer = viewerOf(c);
    const grants = viewer ? null : await passOf(deps, c);
    const played = await recordPlay(deps, c.env.account, Number(id), {
      viewer,
      authorization: undefined,
      slug: c.req.param('slug'),
      pass: (conversation) => (grants ? passReader(grants, conversation) : null),
      session: createHash('sha256').update(`play:${c.var.csrf}`).digest('hex'),
    });
    if (played === 'missing') return notFound(c);
    c.header('cache-control', 'no-store');
    return c.body(null, 204);
  });

  // The receipt, for whoever sees it (the team; the message's author): the 404 for anyone else.
  routes.get('/c/:slug/messages/:id/played', async (c) => {
    const id = c.req.param('id');
    const slug = c.req.param('slug');
    if (!MESSAGE_ID.test(id)) return notFound(c);
    const reader = await readerOf(deps, c, slug);
    const found = await viewMessage(deps, c.env.account, Number(id), reader.viewer, reader.granted, slug);
    const m = found?.message;
    if (!found || !m?.hostedMedia || found.conversation.slug.toLowerCase() !== slug.toLowerCase()) return notFound(c);
    const shown = (await playsShown(deps, c.env.account.id, reader.viewer, [m])).get(m.id);
    if (!shown) return notFound(c);
    return c.html(html`${receipt(m.id, shown)}`, 200, {
      'cache-control': 'no-store',
      'x-robots-tag': 'noindex',
    });
  });

  return routes;
}
