import type { SiteAccount } from '../records.ts';
import type { SiteStore } from './ports.ts';

/* The sitemaps of an account's site: its index and its files, public indexable conversations only. */

/** A sitemap file holds at most 50,000 addresses (sitemaps.org); the index lists as many files as it takes. */
export const SITEMAP_MAX_URLS = 50_000;

/** A sitemap index holds at most 50,000 files. */
export const SITEMAP_MAX_FILES = 50_000;

/** How many sitemap files the account's index lists: one per SITEMAP_MAX_URLS indexable conversations, at least one. */
export async function sitemapFiles(deps: { site: SiteStore }, account: SiteAccount): Promise<number> {
  const count = await deps.site.indexableCount(account.id);
  return Math.min(SITEMAP_MAX_FILES, Math.max(1, Math.ceil(count / SITEMAP_MAX_URLS)));
}

/**
 * The slugs sitemap file `n` (1-based) lists: indexable conversations oldest first, so a file's
 * addresses stay put as conversations are added. Null for a file past the last.
 */
export async function sitemapSlugs(
  deps: { site: SiteStore },
  account: SiteAccount,
  n: number,
): Promise<string[] | null> {
  if (!Number.isSafeInteger(n) || n < 1 || n > SITEMAP_MAX_FILES) return null;
  const slugs = await deps.site.indexableSlugs(account.id, SITEMAP_MAX_URLS, {
    oldestFirst: true,
    offset: (n - 1) * SITEMAP_MAX_URLS,
  });
  return slugs.length === 0 && n > 1 ? null : slugs;
}
