import { isWellFormed, textProblem } from '../shared/text.ts';
import { slugKey } from './slug.ts';
import { titleKey } from './title.ts';

/** What get_conversation was asked for. */
export interface LookupRequest {
  title?: string | undefined;
  slug?: string | undefined;
}

/**
 * The normalised lookup: each key given must match (exactly, ignoring case). When both are
 * given both must match. The most recently created match wins, ties broken by the higher id;
 * with no key, or no match, the account's most recent conversation is the answer.
 */
export interface LookupCriteria {
  titleKey?: string;
  slugKey?: string;
}

/** Why a lookup cannot be answered: a key that is not Unicode text (a lone surrogate) is refused. */
export function lookupProblem(req: LookupRequest): string | null {
  for (const [what, key] of [
    ['title', req.title],
    ['slug', req.slug],
  ] as const) {
    if (key !== undefined && !isWellFormed(key)) return textProblem(what, key);
  }
  return null;
}

export function lookupCriteria(req: LookupRequest): LookupCriteria {
  // No stored title or slug holds a NUL (PostgreSQL text cannot), so such a key matches nothing,
  // and a key that matches nothing means: the most recent conversation.
  if (req.title?.includes('\u0000') || req.slug?.includes('\u0000')) return {};
  const criteria: LookupCriteria = {};
  if (req.title !== undefined) criteria.titleKey = titleKey(req.title);
  if (req.slug !== undefined) criteria.slugKey = slugKey(req.slug);
  return criteria;
}

export const hasCriteria = (c: LookupCriteria): boolean => c.titleKey !== undefined || c.slugKey !== undefined;

/**
 * Which keys the answer matched, for a client to tell a match from the fallback: `title`, `slug`,
 * `title, slug` (both given, both matched), or `none` (no key given, or nothing matched, and the
 * answer is the account's newest conversation). A match is always the newest of its matches, so
 * an answer that fits the keys is one the lookup found.
 */
export type LookupMatch = 'title' | 'slug' | 'title, slug' | 'none';

export function lookupMatch(criteria: LookupCriteria, found: { title: string; slug: string }): LookupMatch {
  if (!hasCriteria(criteria)) return 'none';
  const title = criteria.titleKey === undefined || titleKey(found.title) === criteria.titleKey;
  const slug = criteria.slugKey === undefined || slugKey(found.slug) === criteria.slugKey;
  if (!title || !slug) return 'none';
  if (criteria.titleKey !== undefined && criteria.slugKey !== undefined) return 'title, slug';
  return criteria.titleKey !== undefined ? 'title' : 'slug';
}
