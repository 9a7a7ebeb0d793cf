import { hash, randomBytes } from 'node:crypto';
import type { SiteAccount, UploadVisitor } from '@convo/domain';

/* The site's cookies, the secrets they hold, and what is bound to them (CSRF tokens, uploads). */

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

export const SIGN_IN_LINK_TTL_SECONDS = 15 * 60;

export const SESSION_COOKIE = 'convo_session';

export const VISITOR_COOKIE = 'convo_visitor';

/** What a session or visitor cookie holds: 43 base64url characters. */
export const COOKIE_VALUE = /^[\w-]{43}$/;

/** 32 random bytes, base64url (43 characters): a cookie, session or sign-in secret. */
export const secret = () => randomBytes(32).toString('base64url');

/** The CSRF token bound to a session or visitor cookie. */
export const csrfFor = (cookie: string) => hash('sha256', `csrf:${cookie}`, 'base64url');

/** A session or visitor cookie's value in a Cookie header: its first, when it is one we could have set. */
const cookieIn = (name: string) => new RegExp(`(?:^|;)\\s*${name}=([\\w-]{43})\\s*(?:;|$)`);
const SESSION_IN = cookieIn(SESSION_COOKIE);
const VISITOR_IN = cookieIn(VISITOR_COOKIE);

/**
 * The CSRF token a page gave this visitor (the session middleware's), from the request's Cookie
 * header: its session cookie's, else its visitor cookie's; '' with neither. Read without asking
 * whether the session is still valid, and without a context: Node's early beacon reads it too.
 */
export function cookieCsrf(header: string | undefined): string {
  const cookie = header === undefined ? undefined : (SESSION_IN.exec(header) ?? VISITOR_IN.exec(header))?.[1];
  return cookie === undefined ? '' : csrfFor(cookie);
}

/** Whose uploads this visitor's requests reach: bound to the same cookie as their CSRF token. */
export const uploadVisitor = (accountId: number, csrfToken: string): UploadVisitor => ({
  accountId,
  owner: hash('sha256', `upload:${csrfToken}`, 'base64url'),
});

/** How every cookie of the site is set: the whole site, never to scripts, same-site, secure on https. */
export const cookieOptions = (account: SiteAccount) =>
  ({ path: '/', httpOnly: true, sameSite: 'Lax', secure: account.host.startsWith('https:') }) as const;
