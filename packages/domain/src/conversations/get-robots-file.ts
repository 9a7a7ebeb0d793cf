import type { SiteAccount } from '../records.ts';
import type { SiteStore } from './ports.ts';

/* robots.txt of an account's site: it names public, indexable conversations only. */

/** Search engines read about 500 KiB of robots.txt; the Allow lines stop well before that. */
export const ROBOTS_MAX_BYTES = 450 * 1024;

/**
 * The account site's robots exclusion file. Conversation pages and embeds are disallowed as a
 * whole, and each conversation that may be indexed is allowed by its own line, so the file never
 * names a slug that is private or not meant to be found (a slug is the only key to a public
 * conversation). Allow lines stop at ROBOTS_MAX_BYTES, newest conversations first.
 */
export async function robotsFile(
  deps: { site: SiteStore },
  account: SiteAccount,
  maxBytes = ROBOTS_MAX_BYTES,
): Promise<string> {
  const head = ['User-agent: *', 'Disallow: /c/', 'Disallow: /embeds/'];
  const tail = ['', `Sitemap: ${account.host}/sitemap.xml`, ''];
  let size = [...head, ...tail].join('\n').length + 1;
  const allows: string[] = [];
  // Each Allow line is at most 110 bytes (a slug is 1–100 ASCII characters).
  for (const slug of await deps.site.indexableSlugs(account.id, Math.floor(maxBytes / 12))) {
    const line = `Allow: /c/${slug}$`;
    if (size + line.length + 1 > maxBytes) break;
    size += line.length + 1;
    allows.push(line);
  }
  return [...head, ...allows, ...tail].join('\n');
}
