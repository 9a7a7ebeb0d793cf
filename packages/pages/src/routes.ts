import { createHash, randomBytes } from 'node:crypto';
import {
  completeSignIn,
  conversationUrl,
  isIndexable,
  type LinkOptions,
  type MailOutbox,
  type PeopleStore,
  postReply,
  type ReplyStore,
  requestSignIn,
  returnPath,
  robotsFile,
  SITEMAP_MAX_URLS,
  type SignedIn,
  type SiteAccount,
  type SiteStore,
  type VisitorLimits,
  viewConversation,
  viewMessage,
} from '@convo/domain';
import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { csrf } from 'hono/csrf';
import { html } from 'hono/html';
import { HTTPException } from 'hono/http-exception';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { secureHeaders } from 'hono/secure-headers';
import { ASSETS } from './assets/index.ts';
import { conversation, excerpt, message } from './views/conversation.ts';
import * as forms from './views/forms.ts';
import { chrome, document, type Html, type Preview } from './views/layout.ts';
import * as errors from './views/not-found.ts';

/** A form body as the server read it, or why it could not (too large, not a form, not UTF-8 …). */
export type FormResult =
  | { ok: true; fields: Map<string, string[]> }
  | { ok: false; status: 400 | 408 | 413 | 415; message: string };

export interface SiteLimits {
  /** Form posts (replies, sign-in requests) per client address per minute; 0: no limit. */
  perIpPerMinute: number;
  /** Sign-in links and replies per e-mail address per 15 minutes; 0: no limit. */
  perEmailPer15Minutes: number;
}

export interface SiteDeps {
  site: SiteStore;
  people: PeopleStore;
  replies: ReplyStore;
  outbox: MailOutbox;
  limits: VisitorLimits;
  /** Reads a POST's form body within the server's limits. */
  readForm(req: Request): Promise<FormResult>;
  /** True when the error means the database cannot be reached (answered 503, not 500). */
  isUnavailable(err: unknown): boolean;
  /** Where a failure the visitor cannot cause is reported. */
  onError(err: unknown): void;
  rates: SiteLimits;
}

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;
export const SIGN_IN_LINK_TTL_SECONDS = 15 * 60;
export const SESSION_COOKIE = 'convo_session';
export const VISITOR_COOKIE = 'convo_visitor';

type SiteEnv = {
  Bindings: { account: SiteAccount; clientIp: string };
  Variables: {
    /** The signed-in person, if any. */
    signedIn: SignedIn | null;
    /** The CSRF token every form of this response carries, bound to the session or visitor cookie. */
    csrf: string;
  };
};

export interface Site {
  /** Answers a request that came to `account`'s own host, from `clientIp` (or 'unknown'). */
  fetch(req: Request, account: SiteAccount, o?: { clientIp?: string | undefined }): Promise<Response>;
  /** The retry page, for when the database cannot even say which account's host this is. */
  unavailable(req: Request): Promise<Response>;
}

/** `<message_id>` or, as the API prints embed_message_url, `<message_id>&show_author=<value>`. */
const MESSAGE_KEY = /^(\d{1,10})(?:&show_author=([^&]*))?$/;
const COOKIE_VALUE = /^[\w-]{43}$/;

/** 32 random bytes, base64url (43 characters): a cookie, session or sign-in secret. */
const secret = () => randomBytes(32).toString('base64url');

const csrfFor = (cookie: string) => createHash('sha256').update(`csrf:${cookie}`).digest('base64url');

/*
 * Headers every page answers with (hono's secureHeaders): a policy that allows our own stylesheet
 * and nothing else (no script at all), forms that post only here, no MIME sniffing, no referrer to other sites.
 * The normal page may only be framed by its own site; embeds by any site.
 */
const policy = (frameAncestors: string[]) =>
  secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors,
    },
    xFrameOptions: frameAncestors.includes('*') ? false : 'SAMEORIGIN',
    crossOriginResourcePolicy: frameAncestors.includes('*') ? 'cross-origin' : 'same-origin',
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with our own forms.
    referrerPolicy: 'same-origin',
    strictTransportSecurity: false,
  });

type PageStatus = 200 | 400 | 403 | 404 | 405 | 408 | 410 | 413 | 415 | 422 | 429 | 500 | 503;

interface PageOptions {
  embed?: boolean;
  noindex?: boolean;
  preview?: Preview | undefined;
  canonical?: string;
  headers?: Record<string, string>;
}

/** The account's own site: conversation pages, replies, sign-in, embeds, robots.txt, sitemap and assets. */
export function createSite(deps: SiteDeps): Site {
  const app = new Hono<SiteEnv>();
  const pageHeaders = policy(["'self'"]);
  const embedHeaders = policy(['*']);

  app.use((c, next) => (c.req.path.startsWith('/embeds/') ? embedHeaders(c, next) : pageHeaders(c, next)));
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, allowed) =>
        page(c, 405, errors.methodNotAllowed(allowed.join(', ')), 'Method not allowed', {
          headers: { allow: allowed.join(', ') },
        }),
    }),
  );
  // A form may only be posted from a page of this site (its Origin, or Sec-Fetch-Site: same-origin).
  const sameOrigin = csrf({ origin: (origin, c: Context<SiteEnv>) => origin === c.env.account.host });

  /** Who is signed in (a session cookie of this host), and the CSRF token bound to the visitor. */
  app.use(async (c, next) => {
    const account = c.env.account;
    const secure = account.host.startsWith('https:');
    const cookie = { path: '/', httpOnly: true, sameSite: 'Lax', secure } as const;
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
      // Set on the first visit; a form posted without it is refused (it cannot carry a valid token).
      visitor = c.req.method === 'GET' || c.req.method === 'HEAD' ? secret() : '';
      if (visitor) setCookie(c, VISITOR_COOKIE, visitor, cookie);
    }
    c.set('signedIn', signedIn);
    c.set('csrf', signedIn && sessionToken ? csrfFor(sessionToken) : visitor ? csrfFor(visitor) : '');
    await next();
  });

  /** An HTML answer with the headers every page carries. */
  function page(c: Context<SiteEnv>, status: PageStatus, content: Html, title: string, o: PageOptions = {}) {
    const account = c.env.account;
    const noindex = o.noindex ?? true;
    if (noindex) c.header('x-robots-tag', 'noindex');
    // A page with a form carries a token bound to this visitor: no shared cache may keep it.
    c.header('cache-control', status === 200 ? 'private, no-cache' : 'no-store');
    for (const [name, value] of Object.entries(o.headers ?? {})) c.header(name, value);
    // Only a page that exists is named in its own links: a 404 must not differ by the address asked for.
    const back = status === 200 ? returnPath(c.req.path) : '/';
    const body = o.embed
      ? html`<main id="content">${content}</main>`
      : chrome(account.name, content, forms.signedInBar(c.var.signedIn?.user ?? null, c.var.csrf, back));
    return c.html(
      document({ title: `${title} · ${account.name}`, noindex, preview: o.preview, canonical: o.canonical }, body, {
        embed: o.embed,
      }),
      status,
    );
  }

  const notFound = (c: Context<SiteEnv>) => page(c, 404, errors.notFound(), 'Page not found');
  app.notFound(notFound);
  app.onError((err, c) => {
    if (err instanceof HTTPException && err.status === 403) {
      return page(c, 403, forms.formRefused('This form was sent from another site.'), 'Refused');
    }
    const form = c.req.method === 'POST';
    if (deps.isUnavailable(err)) {
      return page(c, 503, errors.unavailable({ form }), 'Unavailable', { headers: { 'retry-after': '1' } });
    }
    deps.onError(err);
    return page(c, 500, errors.unavailable({ form }), 'Unavailable');
  });

  const link = (account: SiteAccount): LinkOptions => ({
    signInUrl: (token) => `${account.host}/sign-in/${token}`,
    ttlSeconds: SIGN_IN_LINK_TTL_SECONDS,
    newToken: secret,
  });

  /**
   * A POST's form, once it passed the checks every form shares: a body the server can read, the
   * CSRF token of this visitor, and the client address's rate limit. Else the page that says why.
   */
  async function readPost(c: Context<SiteEnv>): Promise<Map<string, string[]> | Response> {
    const form = await deps.readForm(c.req.raw);
    if (!form.ok) return page(c, form.status, forms.formRefused(form.message), 'Refused');
    const token = form.fields.get('csrf');
    if (!c.var.csrf || token?.length !== 1 || token[0] !== c.var.csrf) {
      return page(
        c,
        403,
        forms.formRefused('This form has expired or your browser did not send its cookie.'),
        'Refused',
      );
    }
    const limited = await overLimit(c, `ip:${c.env.clientIp}`, deps.rates.perIpPerMinute, 60);
    return limited ?? form.fields;
  }

  async function overLimit(c: Context<SiteEnv>, key: string, limit: number, windowSeconds: number) {
    if (limit <= 0) return null;
    const taken = await deps.limits.take(`${c.env.account.id}:${key}`, limit, windowSeconds);
    if (taken.allowed) return null;
    return page(c, 429, forms.tooMany(taken.resetSeconds), 'Too many attempts', {
      headers: { 'retry-after': String(taken.resetSeconds) },
    });
  }

  /** A form field given once; a field sent twice is not trusted to mean either value. */
  const field = (fields: Map<string, string[]>, name: string): string | undefined => {
    const values = fields.get(name);
    return values?.length === 1 ? values[0] : undefined;
  };

  async function conversationPage(c: Context<SiteEnv>, status: PageStatus, slug: string, draft?: forms.ReplyDraft) {
    const account = c.env.account;
    const viewer = c.var.signedIn ? { userId: c.var.signedIn.user.id } : null;
    const found = await viewConversation(deps, account, slug, viewer);
    if (!found) return notFound(c);
    const url = conversationUrl(account, found.slug);
    const reply = forms.replyForm(found, {
      csrf: c.var.csrf,
      // Only needs to be unique per form: the platform's UUID is the cheapest source.
      submitKey: crypto.randomUUID(),
      signedIn: c.var.signedIn?.user ?? null,
      draft,
    });
    return page(c, status, html`${conversation(found, url)}${reply}`, found.title, {
      // A private conversation, seen by a member, is kept by no cache at all.
      ...(found.anyoneCanPost ? {} : { headers: { 'cache-control': 'no-store' } }),
      noindex: !isIndexable(found),
      canonical: url,
      // Link previews only for what anyone may see.
      preview: found.anyoneCanPost
        ? { title: found.title, description: excerpt(found), url, siteName: account.name }
        : undefined,
    });
  }

  app.get('/c/:slug', (c) => conversationPage(c, 200, c.req.param('slug')));

  app.post('/c/:slug', sameOrigin, async (c) => {
    const fields = await readPost(c);
    if (fields instanceof Response) return fields;
    const account = c.env.account;
    const form = {
      text: field(fields, 'text') ?? '',
      name: field(fields, 'name'),
      email: field(fields, 'email'),
      submitKey: field(fields, 'submit'),
    };
    const email = form.email?.trim().toLowerCase();
    if (email && !c.var.signedIn) {
      const limited = await overLimit(c, `email:${email}`, deps.rates.perEmailPer15Minutes, 900);
      if (limited) return limited;
    }
    const viewer = c.var.signedIn ? { userId: c.var.signedIn.user.id } : null;
    const outcome = await postReply(deps, account, c.req.param('slug'), viewer, form, link(account));
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'refused':
        return conversationPage(c, 422, c.req.param('slug'), { ...form, problem: outcome.problem });
      case 'check_email':
        return page(c, 200, forms.checkEmail({ reply: true }), 'Check your e-mail');
      case 'posted':
        // POST/redirect/GET: reloading the page it lands on never posts again.
        return c.redirect(`/c/${outcome.slug}#message-${outcome.messageId}`, 303);
    }
  });

  app.get('/sign-in', (c) =>
    page(c, 200, forms.signInForm({ csrf: c.var.csrf, back: returnPath(c.req.query('return')) }), 'Sign in'),
  );

  app.post('/sign-in', sameOrigin, async (c) => {
    const fields = await readPost(c);
    if (fields instanceof Response) return fields;
    const email = field(fields, 'email') ?? '';
    const back = returnPath(field(fields, 'return'));
    const limited = await overLimit(c, `email:${email.trim().toLowerCase()}`, deps.rates.perEmailPer15Minutes, 900);
    if (limited) return limited;
    const refused = await requestSignIn(deps, c.env.account, email, back, link(c.env.account));
    if (refused) {
      return page(c, 422, forms.signInForm({ csrf: c.var.csrf, back, email, problem: refused.refused }), 'Sign in');
    }
    return page(c, 200, forms.checkEmail({ reply: false }), 'Check your e-mail');
  });

  app.get('/sign-in/:token', async (c) => {
    const account = c.env.account;
    const sessionToken = secret();
    const done = await completeSignIn(deps, account, c.req.param('token'), {
      token: sessionToken,
      ttlSeconds: SESSION_TTL_SECONDS,
    });
    if (!done) return page(c, 410, forms.linkUnusable(), 'Sign in');
    setCookie(c, SESSION_COOKIE, sessionToken, {
      path: '/',
      httpOnly: true,
      sameSite: 'Lax',
      secure: account.host.startsWith('https:'),
      maxAge: SESSION_TTL_SECONDS,
    });
    c.header('cache-control', 'no-store');
    return c.redirect(done.redirect, 303);
  });

  app.post('/sign-out', sameOrigin, async (c) => {
    const fields = await readPost(c);
    if (fields instanceof Response) return fields;
    const token = getCookie(c, SESSION_COOKIE);
    if (token && COOKIE_VALUE.test(token)) await deps.people.endSession(c.env.account.id, token);
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: c.env.account.host.startsWith('https:') });
    return c.redirect(returnPath(field(fields, 'return')), 303);
  });

  app.get('/embeds/conversations/:key/:slug', async (c) => {
    const account = c.env.account;
    if (c.req.param('key') !== account.key) return notFound(c);
    const viewer = c.var.signedIn ? { userId: c.var.signedIn.user.id } : null;
    const found = await viewConversation(deps, account, c.req.param('slug'), viewer);
    if (!found) return notFound(c);
    const url = conversationUrl(account, found.slug);
    return page(c, 200, conversation(found, url, { newTab: true }), found.title, {
      embed: true,
      noindex: !isIndexable(found),
      canonical: url,
    });
  });

  app.get('/embeds/messages/:key/:message', async (c) => {
    const account = c.env.account;
    const parsed = MESSAGE_KEY.exec(c.req.param('message'));
    if (c.req.param('key') !== account.key || !parsed) return notFound(c);
    const viewer = c.var.signedIn ? { userId: c.var.signedIn.user.id } : null;
    const found = await viewMessage(deps, account, Number(parsed[1]), viewer);
    if (!found) return notFound(c);
    const showAuthor = (parsed[2] ?? c.req.query('show_author')) === 'true';
    const target = `${conversationUrl(account, found.conversation.slug)}#message-${found.message.id}`;
    return page(
      c,
      200,
      html`<h1 class="embed-title">${found.conversation.title}</h1>
${message(found.message, { showAuthor, link: target, anchor: false, newTab: true })}`,
      found.conversation.title,
      { embed: true, noindex: !isIndexable(found.conversation), canonical: target },
    );
  });

  app.get('/robots.txt', async (c) => {
    c.header('cache-control', 'public, max-age=300');
    return c.text(await robotsFile(deps, c.env.account));
  });

  app.get('/sitemap.xml', async (c) => {
    const account = c.env.account;
    const slugs = await deps.site.indexableSlugs(account.id, SITEMAP_MAX_URLS);
    const xml = await html`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${slugs.map((slug) => html`<url><loc>${conversationUrl(account, slug)}</loc></url>\n`)}</urlset>
`;
    c.header('content-type', 'application/xml; charset=utf-8');
    c.header('cache-control', 'public, max-age=300');
    return c.body(xml.toString());
  });

  app.get('/assets/:file', (c) => {
    const asset = ASSETS.get(c.req.path);
    if (!asset) return notFound(c);
    c.header('content-type', asset.type);
    c.header('cache-control', 'public, max-age=31536000, immutable');
    return c.body(asset.body);
  });

  return {
    fetch: async (req, account, o = {}) => app.fetch(req, { account, clientIp: o.clientIp ?? 'unknown' }),
    async unavailable(req) {
      const body = await document(
        { title: 'Temporarily unavailable', noindex: true },
        html`<main id="content">${errors.unavailable({ form: req.method === 'POST' })}</main>`,
      );
      return new Response(body.toString(), {
        status: 503,
        headers: {
          'content-type': 'text/html; charset=UTF-8',
          'retry-after': '1',
          'cache-control': 'no-store',
          'content-security-policy': "default-src 'none'; style-src 'self'; base-uri 'none'; frame-ancestors 'self'",
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'same-origin',
        },
      });
    },
  };
}

/** A bounded metrics label for a path of the site. */
export function siteLabel(path: string): string {
  if (path.startsWith('/c/')) return 'page';
  if (path.startsWith('/embeds/conversations/')) return 'embed_conversation';
  if (path.startsWith('/embeds/messages/')) return 'embed_message';
  if (path.startsWith('/sign-in') || path === '/sign-out') return 'sign_in';
  if (path === '/robots.txt') return 'robots';
  if (path === '/sitemap.xml') return 'sitemap';
  if (path.startsWith('/assets/')) return 'asset';
  return 'site_other';
}
