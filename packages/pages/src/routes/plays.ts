import { hash } from 'node:crypto';
import {
  type PageMessageRecord,
  playsShown,
  reportsPlay,
  type SiteAccount,
  type Viewer,
  viewMessage,
} from '@convo/domain';
import { type Handler, Hono } from 'hono';
import { html } from 'hono/html';
import { cookieCsrf } from '../cookies.ts';
import type { SiteDeps } from '../deps.ts';
import { notFound, pageHeaders, refused, tooMany } from '../frame.ts';
import { playTicket, playTicketViewer, readerOf } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import type { SiteContext, SiteEnv } from '../request.ts';
import { type ConversationDisplay, receipt } from '../views/conversation.ts';

/*
 * Played receipts (docs/pages.md, "Played receipts"). A page's player reports a play once it
 * has played long enough (site.js: a small same-origin POST at that moment, to
 * `/c/<slug>/messages/<id>/played?ticket=<the ticket the page gave that player>`); the same address read answers the receipt
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
 * A beacon's address as the pages' players send it (site.js): the ticket in its query and nothing
 * in its body, so a server that reads requests itself can take it before any routing (Node's:
 * start/serve-node.ts in apps/api). A slug there is as slugs are made (no escapes to decode).
 */
const BEACON_ADDRESS = /^\/c\/([\w-]{1,100})\/messages\/(\d{1,10})\/played\?ticket=([\w.-]{1,80})$/;

/** What a beacon brings: where it reports, its ticket, and what of its request the checks read. */
export interface Beacon {
  slug: string;
  id: string;
  /** The signed ticket its page gave this player (passes.ts, playTicket). */
  ticket: string;
  /** Its Cookie header. */
  cookie: string | undefined;
  /** Its Sec-Fetch-Site and Origin headers: either must say it came from the account's own pages. */
  fetchSite: string | undefined;
  origin: string | undefined;
  /** Its client, as the per-address limits count it. */
  clientIp: string;
}

/** The slug, message id and ticket of a request to a beacon's own address (`path` with its query); else null. */
export function beaconAt(path: string): Pick<Beacon, 'slug' | 'id' | 'ticket'> | null {
  const at = BEACON_ADDRESS.exec(path);
  return at?.[1] && at[2] && at[3] ? { slug: at[1], id: at[2], ticket: at[3] } : null;
}

/** Why a beacon was not kept: the answer its route gives. */
export type BeaconRefusal = { status: 403 } | { status: 404 } | { status: 429; retryAfter: number };

/**
 * The beacon's checks, in the order a flood meets them: a message id, same-origin (Sec-Fetch-Site
 * or Origin, whatever its body's type), the beacons' own per-address limit (PLAY_LIMIT_PER_IP, on
 * the read limits' shared quota), and the ticket checked against this visitor's cookie. When they
 * hold, the play waits in the PlayBuffer to be written with others (null); a play is kept once
 * per message and session, so a beacon sent again is kept as often as it comes and counts once.
 * A ticket that does not hold (none, another message's, slug's, cookie's or account's, or a day
 * old) is refused as a recording this reader may not play is: 404.
 */
export async function takePlay(
  deps: SiteDeps,
  account: SiteAccount,
  beacon: Beacon,
  refusalsElsewhere = false,
): Promise<BeaconRefusal | null> {
  if (!MESSAGE_ID.test(beacon.id)) return { status: 404 };
  if (beacon.fetchSite !== 'same-origin' && beacon.origin !== account.host) return { status: 403 };
  const limited = async (): Promise<BeaconRefusal | null> => {
    const limit = deps.rates.playsPerIpPerMinute;
    if (limit <= 0) return null;
    const taken = await deps.readLimits.take(`${account.id}:play:${beacon.clientIp}`, limit, 60);
    return taken.allowed ? null : { status: 429, retryAfter: taken.resetSeconds };
  };
  // A server that hands every refusal on to the route (`refusalsElsewhere`) counts only the plays
  // it keeps: the route counts the others, each once.
  const first = refusalsElsewhere ? null : await limited();
  if (first) return first;
  const csrf = cookieCsrf(beacon.cookie);
  const to = { accountId: account.id, slug: beacon.slug, messageId: Number(beacon.id), csrf };
  const held = playTicketViewer(await deps.secrets.signingKey(), to, beacon.ticket);
  if (!held) return { status: 404 };
  const last = refusalsElsewhere ? await limited() : null;
  if (last) return last;
  deps.playBuffer.add({
    accountId: to.accountId,
    messageId: to.messageId,
    viewerId: held.viewerId,
    sessionKey: hash('sha256', `play:${csrf}`, 'hex'),
  });
  return null;
}

/**
 * The beacon's route, answered before the site's middleware (a beacon comes as often as pages are
 * viewed, and needs nothing the middleware reads): takePlay, then 204 whether or not the play
 * will count; a refusal is the page the middleware would have made (nobody signed in, no form).
 */
export function playBeacon({ deps }: SiteKit) {
  const handler: Handler<SiteEnv, typeof PLAYED_ROUTE> = async (c) => {
    c.env.visit.label = `site:${PLAYED_ROUTE}`;
    const refusal = await takePlay(deps, c.env.account, {
      slug: c.req.param('slug'),
      id: c.req.param('id'),
      ticket: c.req.query('ticket') ?? '',
      cookie: c.req.header('cookie'),
      fetchSite: c.req.header('sec-fetch-site'),
      origin: c.req.header('origin'),
      clientIp: c.env.visit.clientIp,
    });
    if (!refusal) return c.body(null, 204, { 'cache-control': 'no-store' });
    c.set('signedIn', null);
    c.set('csrf', '');
    c.set('newVisitor', null);
    await pageHeaders(c, async () => {
      c.res =
        refusal.status === 404
          ? await notFound(c)
          : refusal.status === 403
            ? await refused(c, 403, 'This form was sent from another site.')
            : await tooMany(c, refusal.retryAfter);
    });
    return c.res;
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
