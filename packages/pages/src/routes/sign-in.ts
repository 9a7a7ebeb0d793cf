import { completeSignIn, type OpenedLink, openSignInLink, requestSignIn, returnPath } from '@convo/domain';
import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { COOKIE_VALUE, cookieOptions, SESSION_COOKIE, SESSION_TTL_SECONDS, secret } from '../cookies.ts';
import { type PageStatus, page } from '../frame.ts';
import type { SiteKit } from '../posting.ts';
import { field, type SiteContext, type SiteEnv } from '../request.ts';
import * as forms from '../views/forms.ts';

/** Sign-in by a mailed link, and sign-out (of this device, or everywhere). */
export function signInRoutes({ deps, posting }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  routes.get('/sign-in', (c) =>
    page(c, 200, forms.signInForm({ csrf: c.var.csrf, back: returnPath(c.req.query('return')) }), 'Sign in', {
      form: true,
    }),
  );

  routes.post('/sign-in', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const email = field(fields, 'email') ?? '';
    const back = returnPath(field(fields, 'return'));
    const limited = await posting.mailLimit(c, email);
    if (limited) return limited;
    const refused = await requestSignIn(deps, c.env.account, email, back, posting.link(c.env.account));
    if (refused) {
      return page(c, 422, forms.signInForm({ csrf: c.var.csrf, back, email, problem: refused.refused }), 'Sign in');
    }
    return page(c, 200, forms.checkEmail({ reply: false }), 'Check your e-mail');
  });

  /*
   * A mailed link never acts on GET or HEAD (mail scanners and link checkers open links): it shows
   * whom it signs in and the reply that waits, with a button. Only that form's POST, with the CSRF
   * token of the device that opened it, signs in or posts, so another site cannot sign a visitor
   * in as someone else either.
   */
  const linkPage = (c: SiteContext, status: PageStatus, opened: OpenedLink, problem?: string) =>
    page(
      c,
      status,
      forms.confirmSignIn({ csrf: c.var.csrf, action: c.req.path, link: opened, problem }),
      opened.pending ? 'Confirm your reply' : opened.claim ? 'Confirm your conversation' : 'Sign in',
      { form: true, headers: { 'cache-control': 'no-store' } },
    );
  const unusable = (c: SiteContext) =>
    page(c, 410, forms.linkUnusable(), 'Sign in', { headers: { 'cache-control': 'no-store' } });

  routes.get('/sign-in/:token', async (c) => {
    const opened = await openSignInLink(deps, c.env.account, c.req.param('token'));
    return opened ? linkPage(c, 200, opened) : unusable(c);
  });

  routes.post('/sign-in/:token', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const account = c.env.account;
    const sessionToken = secret();
    const done = await completeSignIn(
      deps,
      account,
      c.req.param('token'),
      { token: sessionToken, ttlSeconds: SESSION_TTL_SECONDS },
      { name: field(fields, 'name') },
    );
    if (done.kind === 'unusable') return unusable(c);
    if (done.kind === 'refused') return linkPage(c, 422, done.link, done.problem);
    setCookie(c, SESSION_COOKIE, sessionToken, { ...cookieOptions(account), maxAge: SESSION_TTL_SECONDS });
    c.header('cache-control', 'no-store');
    return c.redirect(done.redirect, 303);
  });

  routes.post('/sign-out', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const token = getCookie(c, SESSION_COOKIE);
    const signedIn = c.var.signedIn;
    // "Sign out everywhere": every session of this person, on every device. Sessions are rows
    // read on each request, so every replica sees them end at once.
    if (signedIn && field(fields, 'everywhere') === '1') {
      await deps.people.endAllSessions(c.env.account.id, signedIn.user.id);
    } else if (token && COOKIE_VALUE.test(token)) {
      await deps.people.endSession(c.env.account.id, token);
    }
    deleteCookie(c, SESSION_COOKIE, cookieOptions(c.env.account));
    return c.redirect(returnPath(field(fields, 'return')), 303);
  });

  return routes;
}
