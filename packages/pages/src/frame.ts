import { returnPath, seesEveryConversation } from '@convo/domain';
import { setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { secureHeaders } from 'hono/secure-headers';
import { cookieOptions, VISITOR_COOKIE } from './cookies.ts';
import type { SiteContext } from './request.ts';
import * as forms from './views/forms.ts';
import { chrome, document, type Html, type Preview } from './views/layout.ts';
import { manageNav } from './views/manage.ts';
import * as errors from './views/not-found.ts';

/*
 * The frame every page of the site is answered in: its headers (one policy), the document around
 * its content, the visitor cookie a form needs, and the pages every route may answer with (404,
 * 503, the retry page when not even the account is known).
 */

/**
 * What a page may load and who may frame it: our own stylesheet, scripts and recordings, the
 * recorder's own recording to play back (blob:), uploads to our own host, nothing else.
 */
const directives = (frameAncestors: string[]) => ({
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  mediaSrc: ["'self'", 'blob:'],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors,
});

/*
 * Headers every page answers with (hono's secureHeaders): the policy above, forms that post only
 * here, no MIME sniffing, no referrer to other sites. The normal page may only be framed by its
 * own site; embeds by any site.
 */
const policy = (frameAncestors: string[]) =>
  secureHeaders({
    contentSecurityPolicy: directives(frameAncestors),
    xFrameOptions: frameAncestors.includes('*') ? false : 'SAMEORIGIN',
    crossOriginResourcePolicy: frameAncestors.includes('*') ? 'cross-origin' : 'same-origin',
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with our own forms.
    referrerPolicy: 'same-origin',
    strictTransportSecurity: false,
  });

/** The headers' middleware: pages framed by their own site, embeds by any. */
export const pageHeaders = policy(["'self'"]);
export const embedHeaders = policy(['*']);

/**
 * A recording's bytes (`/media/…`): never a document, so a policy that allows nothing and
 * sandboxes whatever a browser might still try to render; no MIME sniffing; not framed.
 */
export const mediaHeaders = secureHeaders({
  contentSecurityPolicy: { defaultSrc: ["'none'"], sandbox: [] },
  xFrameOptions: 'DENY',
  // Same-origin unless the route said otherwise: a public recording may be played by any site.
  crossOriginResourcePolicy: 'same-origin',
  overwrite: false,
  referrerPolicy: 'same-origin',
  strictTransportSecurity: false,
});

export type PageStatus = 200 | 400 | 403 | 404 | 405 | 408 | 410 | 413 | 415 | 422 | 429 | 500 | 503;

export interface PageOptions {
  /** The page carries a form: a first-time visitor gets the cookie its CSRF token is bound to. */
  form?: boolean;
  embed?: boolean;
  noindex?: boolean;
  preview?: Preview | undefined;
  canonical?: string;
  headers?: Record<string, string>;
  /** Room for a side panel beside the content on wide screens (the team's conversation page). */
  wide?: boolean;
}

/** An HTML answer with the headers every page carries. */
export function page(c: SiteContext, status: PageStatus, content: Html, title: string, shown: PageOptions = {}) {
  const account = c.env.account;
  const noindex = shown.noindex ?? true;
  if (noindex) c.header('x-robots-tag', 'noindex');
  const newVisitor = c.var.newVisitor;
  if (newVisitor && shown.form) setCookie(c, VISITOR_COOKIE, newVisitor, cookieOptions(account));
  // A page with a form carries a token bound to this visitor: no shared cache may keep it.
  c.header('cache-control', status === 200 ? 'private, no-cache' : 'no-store');
  for (const [name, value] of Object.entries(shown.headers ?? {})) c.header(name, value);
  // The sign-in link brings the person back here, a 404 included (a private conversation's, once
  // they may see it): the address asked for, which a missing and a private one share alike.
  const back = returnPath(c.req.path);
  // The team's pages are a click away from every page, for the team.
  const role = c.var.signedIn?.teamRole ?? null;
  const nav = role ? manageNav(seesEveryConversation(role)) : html``;
  const body = shown.embed
    ? html`<main id="content">${content}</main>`
    : chrome(account.name, content, forms.signedInBar(c.var.signedIn?.user ?? null, c.var.csrf, back), nav, shown.wide);
  const head = { title: `${title} · ${account.name}`, noindex, preview: shown.preview, canonical: shown.canonical };
  return c.html(document(head, body, { embed: shown.embed }), status);
}

/** What a visitor sees of anything missing, or private to others: the same page either way. */
export const notFound = (c: SiteContext) => page(c, 404, errors.notFound(), 'Page not found');

/** The page of a form that was refused, and why. */
export const refused = (c: SiteContext, status: PageStatus, why: string) =>
  page(c, status, forms.formRefused(why), 'Refused');

/** Too many of these from this client: a 429 page that says when to try again. */
export const tooMany = (c: SiteContext, seconds: number, title = 'Too many attempts') =>
  page(c, 429, forms.tooMany(seconds), title, { headers: { 'retry-after': String(seconds) } });

/** The server is too busy to take this now: a 503 page that says why, with when to try again. */
export const busy = (c: SiteContext, why: string) =>
  page(c, 503, forms.formRefused(why), 'Try again in a moment', { headers: { 'retry-after': '5' } });

/** The retry page, for when the database cannot even say which account's host this is. */
export async function unavailablePage(req: Request): Promise<Response> {
  const body = await document(
    { title: 'Temporarily unavailable', noindex: true },
    html`<main id="content">${errors.unavailable({ form: req.method === 'POST' })}</main>`,
  );
  const csp = Object.entries(directives(["'self'"]))
    .map(([name, values]) => `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${values.join(' ')}`)
    .join('; ');
  return new Response(body.toString(), {
    status: 503,
    headers: {
      'content-type': 'text/html; charset=UTF-8',
      'retry-after': '1',
      'cache-control': 'no-store',
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
    },
  });
}
