import { conversationUrl, robotsFile, sitemapFiles, sitemapSlugs } from '@convo/domain';
import { Hono } from 'hono';
import { ASSETS } from '../assets/index.ts';
import { notFound } from '../frame.ts';
import type { SiteKit } from '../posting.ts';
import type { SiteContext, SiteEnv } from '../request.ts';
import { sitemap, sitemapIndex } from '../views/sitemap.ts';

/** What crawlers read (robots.txt, the sitemaps) and the site's own assets. */
export function seoRoutes({ deps }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  /**
   * A file for crawlers, kept per change of the account (KeptFiles): its ETag answers a matching
   * If-None-Match with 304, and shared caches may keep it a few minutes.
   */
  async function keptFile(c: SiteContext, name: string, type: string, make: () => Promise<string | null>) {
    const account = c.env.account;
    const mark = await deps.site.changeMark(account.id);
    // A file that does not exist (a sitemap past the last) is kept as empty text, and is a 404.
    const file = await deps.files.get(
      { accountId: account.id, mark, host: account.host, name },
      async () => (await make()) ?? '',
    );
    if (file.body === '') return notFound(c);
    c.header('etag', file.etag);
    c.header('cache-control', 'public, max-age=300');
    const asked = c.req.header('if-none-match');
    if (asked?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === file.etag || tag.trim() === '*')) {
      return c.body(null, 304);
    }
    c.header('content-type', type);
    return c.body(file.body);
  }

  routes.get('/robots.txt', (c) =>
    keptFile(c, 'robots.txt', 'text/plain; charset=UTF-8', () => robotsFile(deps, c.env.account)),
  );

  routes.get('/sitemap.xml', (c) =>
    keptFile(c, 'sitemap.xml', 'application/xml; charset=utf-8', async () =>
      sitemapIndex(c.env.account.host, await sitemapFiles(deps, c.env.account)),
    ),
  );

  routes.get('/:file{sitemap-[1-9][0-9]{0,4}\\.xml}', (c) => {
    const account = c.env.account;
    const n = Number(/\d+/.exec(c.req.param('file'))?.[0]);
    return keptFile(c, `sitemap-${n}.xml`, 'application/xml; charset=utf-8', async () => {
      const slugs = await sitemapSlugs(deps, account, n);
      return slugs ? sitemap(slugs.map((slug) => conversationUrl(account, slug))) : null;
    });
  });

  routes.get('/assets/:file', (c) => {
    const asset = ASSETS.get(c.req.path);
    if (!asset) return notFound(c);
    c.header('content-type', asset.type);
    c.header('cache-control', 'public, max-age=31536000, immutable');
    return c.body(asset.body);
  });

  return routes;
}
