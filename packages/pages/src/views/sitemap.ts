import { html } from 'hono/html';

/*
 * The sitemaps (sitemaps.org): an index at /sitemap.xml naming one file per 50,000 addresses.
 * Every value is escaped by the `html` tag, which escapes what XML needs too.
 */

export async function sitemapIndex(host: string, files: number): Promise<string> {
  const names = Array.from({ length: files }, (_, i) => `${host}/sitemap-${i + 1}.xml`);
  return (
    await html`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${names.map((loc) => html`<sitemap><loc>${loc}</loc></sitemap>\n`)}</sitemapindex>
`
  ).toString();
}

export async function sitemap(urls: string[]): Promise<string> {
  return (
    await html`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls.map((loc) => html`<url><loc>${loc}</loc></url>\n`)}</urlset>
`
  ).toString();
}
