import {
  conversationUrl,
  isIndexable,
  robotsFile,
  SITEMAP_MAX_URLS,
  type SiteAccount,
  type SiteStore,
  viewConversation,
  viewMessage,
} from '@convo/domain';
import { type Context, Hono } from 'hono';
import { html } from 'hono/html';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { secureHeaders } from 'hono/secure-headers';
import { ASSETS } from './assets/index.ts';
import { conversation, excerpt, message } from './views/conversation.ts';
import { chrome, document, type Html } from './views/layout.ts';
import * as errors from './views/not-found.ts';

export interface SiteDeps {
  site: SiteStore;
  /** True when the error means the database cannot be reached (answered 503, not 500). */
  isUnavailable(err: unknown): boolean;
  /** Where a failure the visitor cannot cause is reported. */
  onError(err: unknown): void;
}

type SiteEnv = { Bindings: { account: SiteAccount } };

export interface Site {
  /** Answers a request that came to `account`'s own host. */
  fetch(req: Request, account: SiteAccount): Promise<Response>;
}

/** `<message_id>` or, as the API prints embed_message_url, `<message_id>&show_author=<value>`. */
const MESSAGE_KEY = /^(\d{1,10})(?:&show_author=([^&]*))?$/;

/** Pages change when someone replies: a browser may keep one but asks each time whether it changed. */
const PAGE_CACHE = 'no-cache';

/*
 * Headers every page answers with (hono's secureHeaders): a policy that allows our own stylesheet
 * and nothing else (no script at all), no MIME sniffing, no referrer. The normal page may only be
 * framed by its own site; embeds by any site.
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
    referrerPolicy: 'no-referrer',
    strictTransportSecurity: false,
  });

/** The account's own site: conversation pages, embeds, robots.txt, sitemap and assets. */
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
          allow: allowed.join(', '),
        }),
    }),
  );

  /** An HTML answer with the headers every page carries. */
  function page(
    c: Context<SiteEnv>,
    status: 200 | 404 | 405 | 500 | 503,
    content: Html,
    title: string,
    headers: Record<string, string> = {},
    o: {
      embed?: boolean;
      noindex?: boolean;
      preview?: Parameters<typeof document>[0]['preview'];
      canonical?: string;
    } = {},
  ) {
    const account = c.env.account;
    const noindex = o.noindex ?? true;
    if (noindex) c.header('x-robots-tag', 'noindex');
    c.header('cache-control', status === 200 ? PAGE_CACHE : 'no-store');
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    const body = o.embed ? html`<main id="content">${content}</main>` : chrome(account.name, content);
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
    if (deps.isUnavailable(err)) return page(c, 503, errors.unavailable(), 'Unavailable', { 'retry-after': '1' });
    deps.onError(err);
    return page(c, 500, errors.unavailable(), 'Unavailable');
  });

  app.get('/c/:slug', async (c) => {
    const account = c.env.account;
    const found = await viewConversation(deps, account, c.req.param('slug'));
    if (!found) return notFound(c);
    const url = conversationUrl(account, found.slug);
    return page(
      c,
      200,
      conversation(found, url),
      found.title,
      {},
      {
        noindex: !isIndexable(found),
        canonical: url,
        // Link previews only for what anyone may see.
        preview: found.anyoneCanPost
          ? { title: found.title, description: excerpt(found), url, siteName: account.name }
          : undefined,
      },
    );
  });

  app.get('/embeds/conversations/:key/:slug', async (c) => {
    const account = c.env.account;
    if (c.req.param('key') !== account.key) return notFound(c);
    const found = await viewConversation(deps, account, c.req.param('slug'));
    if (!found) return notFound(c);
    const url = conversationUrl(account, found.slug);
    return page(
      c,
      200,
      conversation(found, url, { newTab: true }),
      found.title,
      {},
      {
        embed: true,
        noindex: !isIndexable(found),
        canonical: url,
      },
    );
  });

  app.get('/embeds/messages/:key/:message', async (c) => {
    const account = c.env.account;
    const parsed = MESSAGE_KEY.exec(c.req.param('message'));
    if (c.req.param('key') !== account.key || !parsed) return notFound(c);
    const found = await viewMessage(deps, account, Number(parsed[1]));
    if (!found) return notFound(c);
    const showAuthor = (parsed[2] ?? c.req.query('show_author')) === 'true';
    const link = `${conversationUrl(account, found.conversation.slug)}#message-${found.message.id}`;
    return page(
      c,
      200,
      html`<h1 class="embed-title">${found.conversation.title}</h1>
${message(found.message, { showAuthor, link, anchor: false, newTab: true })}`,
      found.conversation.title,
      {},
      { embed: true, noindex: !isIndexable(found.conversation), canonical: link },
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
    fetch: async (req, account) => app.fetch(req, { account }),
  };
}

/** A bounded metrics label for a path of the site. */
export function siteLabel(path: string): string {
  if (path.startsWith('/c/')) return 'page';
  if (path.startsWith('/embeds/conversations/')) return 'embed_conversation';
  if (path.startsWith('/embeds/messages/')) return 'embed_message';
  if (path === '/robots.txt') return 'robots';
  if (path === '/sitemap.xml') return 'sitemap';
  if (path.startsWith('/assets/')) return 'asset';
  return 'site_other';
}
