import type { SignedIn } from '@convo/domain';
import type { MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import {
  COOKIE_VALUE,
  cookieOptions,
  csrfFor,
  SESSION_COOKIE,
  SESSION_TTL_SECONDS,
  secret,
  VISITOR_COOKIE,
} from './cookies.ts';
import type { SiteDeps } from './deps.ts';
import { tooMany } from './frame.ts';
import type { SiteEnv } from './request.ts';

/*
 * What runs before every route of the site: the per-address read limit, and who is signed in with
 * the CSRF token bound to this visitor.
 */

/**
 * Page reads per client address: generous (no reader notices), but a client that reads as fast
 * as it can is refused before anything else is read for it. Assets are served from memory and
 * never count.
 */
export const readLimit =
  (deps: SiteDeps): MiddlewareHandler<SiteEnv> =>
  async (c, next) => {
    const read = c.req.method === 'GET' || c.req.method === 'HEAD';
    if (!read || deps.rates.readsPerIpPerMinute <= 0 || c.req.path.startsWith('/assets/')) return next();
    const taken = await deps.readLimits.take(
      `${c.env.account.id}:${c.env.visit.clientIp}`,
      deps.rates.readsPerIpPerMinute,
      60,
    );
    if (taken.allowed) return next();
    c.set('signedIn', null);
    c.set('csrf', '');
    c.set('newVisitor', null);
    return tooMany(c, taken.resetSeconds, 'Too many requests');
  };

/** Who is signed in (a session cookie of this host), and the CSRF token bound to the visitor. */
export const session =
  (deps: SiteDeps): MiddlewareHandler<SiteEnv> =>
  async (c, next) => {
    const account = c.env.account;
    const cookie = cookieOptions(account);
    const sessionToken = getCookie(c, SESSION_COOKIE);
    let signedIn: SignedIn | null = null;
    if (sessionToken !== undefined) {
      signedIn = COOKIE_VALUE.test(sessionToken)
        ? await deps.people.session(account.id, sessionToken, SESSION_TTL_SECONDS)
        : null;
      if (!signedIn) deleteCookie(c, SESSION_COOKIE, cookie);
      else if (signedIn.renewed && sessionToken)
        setCookie(c, SESSION_COOKIE, sessionToken, { ...cookie, maxAge: SESSION_TTL_SECONDS });
    }
    let visitor = getCookie(c, VISITOR_COOKIE);
    if (!visitor || !COOKIE_VALUE.test(visitor)) {
      // Made on a first visit, and set only by a page that carries a form (page()): never on an
      // answer a shared cache may keep. A form posted without it is refused (it carries no valid token).
      visitor = c.req.method === 'GET' || c.req.method === 'HEAD' ? secret() : '';
      c.set('newVisitor', visitor || null);
    } else {
      c.set('newVisitor', null);
    }
    c.set('signedIn', signedIn);
    c.set('csrf', signedIn && sessionToken ? csrfFor(sessionToken) : visitor ? csrfFor(visitor) : '');
    await next();
  };
