import { createHash } from 'node:crypto';
import { type PageMessageRecord, playsShown, reportsPlay, type Viewer, viewMessage } from '@convo/domain';
import { type Handler, Hono } from 'hono';
import { html } from 'hono/html';
import { cookieCsrf } from '../cookies.ts';
import { notFound, pageHeaders, refused } from '../frame.ts';
import { playTicket, playTicketViewer, readerOf } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import type { SiteContext, SiteEnv } from '../request.ts';
import { type ConversationDisplay, receipt } from '../views/conversation.ts';

/*
 * Played receipts (docs/pages.md, "Played receipts"). A page's player reports a play once it
 * has played long enough (site.js: a small same-origin POST of the ticket the page gave that
 * player, at that moment), to `/c/<slug>/messages/<id>/played`; the same address read answers the receipt
 * ("Played by Pat and 2 visitors") to those who see it, for a live update. Without JavaScript no
 * play is reported: a page alone cannot tell that a recording played.
 */

const MESSAGE_ID = /^[1-9]\d{0,9}$/;

/** Where a player reports its play (POST, the beacon) and its receipt is read (GET). */
export const PLAYED_ROUTE = '/c/:slug/messages/:id/played';

/** What a page shows of receipts to this reader (`viewer`, as the page's rule reads them) among `messages`. */
export async function playedDisplay(
  { deps }: SiteKit,
  c: SiteContext,
  viewer: Viewer,
  messages: readonly PageMessageRecord[],
): Promise<NonNullable<ConversationDisplay['played']>> {
  const reports = reportsPlay(viewer);
  const key = messages.some(reports) ? await deps.secrets.signingKey() : '';
  const to = { accountId: c.env.account.id, csrf: c.var.csrf, viewerId: viewer?.userId ?? null };
  return {
    ticket: (m, slug) =>
      key && c.var.csrf && reports(m) ? playTicket(key, { ...to, slug, messageId: m.id }) : undefined,
    receipts: await playsShown(deps, c.env.account.id, viewer, messages),
  };
}

/**
 * The beacon, answered before the site's middleware (a beacon comes as often as pages are viewed,
 * and needs nothing the middleware reads): the same-origin check, the form (`ticket`, the signed
 * ticket its page gave this player), the ticket checked against this visitor's cookie, and the
 * beacons' own per-address limit (PLAY_LIMIT_PER_IP, on the read limits' shared quota); then the
 * play waits in the PlayBuffer to be written with others, and the answer is 204 whether or not it
 * will count (a play is kept once per message and session). A ticket that does not hold (none,
 * another message's, slug's, cookie's or account's, or a day old) answers the 404 a recording
 * this reader may not play answers.
 */
export function playBeacon({ deps, posting }: SiteKit) {
  const handler: Handler<SiteEnv, typeof PLAYED_ROUTE> = async (c) => {
    c.env.visit.label = `site:${PLAYED_ROUTE}`;
    // Its refusals are pages as the middleware would make them: nobody signed in, no form on them.
    c.set('signedIn', null);
    c.set('csrf', '');
    c.set('newVisitor', null);
    const refusal = async (answer: Response | Promise<Response>) => {
      const res = await answer;
      await pageHeaders(c, async () => {
        c.res = res;
      });
      return c.res;
    };
    const id = c.req.param('id');
    if (!MESSAGE_ID.test(id)) return refusal(notFound(c));
    const cross = await posting
      .sameOrigin(c, async () => {})
      .then(
        () => false,
        () => true,
      );
    if (cross) return refusal(refused(c, 403, 'This form was sent from another site.'));
    const limited = await posting.overLimit(
      c,
      `play:${c.env.visit.clientIp}`,
      deps.rates.playsPerIpPerMinute,
      60,
      deps.readLimits,
    );
    if (limited) return refusal(limited);
    const form = await deps.readForm(c.req.raw);
    if (!form.ok) return refusal(refused(c, form.status, form.message));
    const csrf = cookieCsrf(c);
    const to = { accountId: c.env.account.id, slug: c.req.param('slug'), messageId: Number(id), csrf };
    const held = playTicketViewer(await deps.secrets.signingKey(), to, form.fields.get('ticket')?.[0] ?? '');
    if (!held) return refusal(notFound(c));
    deps.playBuffer.add({
      accountId: to.accountId,
      messageId: to.messageId,
      viewerId: held.viewerId,
      sessionKey: createHash('sha256').update(`play:${csrf}`).digest('hex'),
    });
    return c.body(null, 204, { 'cache-control': 'no-store' });
  };
  return handler;
}

export function playRoutes({ deps }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  // The receipt, for whoever sees it (the team; the message's author): the 404 for anyone else.
  routes.get(PLAYED_ROUTE, async (c) => {
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
