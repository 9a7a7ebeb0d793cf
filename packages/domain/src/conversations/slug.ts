import { textProblem } from '../shared/text.ts';

export const SLUG_MAX_LENGTH = 100;
export const SLUG_PATTERN = /^[A-Za-z0-9_-]+$/;
export const SLUG_RULE = `a slug is 1 to ${SLUG_MAX_LENGTH} characters: ASCII letters, digits, '_' and '-' only`;

/** Returns why `slug` is not acceptable, or null when it is. */
export function slugProblem(slug: string): string | null {
  if (slug.length === 0) return 'slug must not be empty';
  if (slug.length > SLUG_MAX_LENGTH) return `slug must be at most ${SLUG_MAX_LENGTH} characters`;
  if (!SLUG_PATTERN.test(slug))
    return textProblem('slug', slug) ?? "slug may contain only ASCII letters, digits, '_' and '-'";
  return null;
}

/**
 * Slugs are unique per account ignoring case; this is the form they are compared in. Slugs are
 * ASCII, so the rule is ASCII-only: A-Z to a-z and nothing else, whatever the locale (a Turkish
 * one lowers I to ı; Unicode lowers the Kelvin sign to k). PostgreSQL applies the same rule as
 * `lower(slug collate "C")`, in the unique index and in the lookup.
 */
export const slugKey = (slug: string): string => slug.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());

/** The SQL expression that computes slugKey from a slug column, the same in index and query. */
export const SLUG_KEY_SQL = (column: string): string => `lower(${column} collate "C")`;

/**
 * A generated slug is the only key to a public conversation, so it must not be guessable:
 * 25 hex characters carry 100 random bits from the platform CSPRNG.
 */
export const GENERATED_SLUG_LENGTH = 25;

export function generateSlug(): string {
  const bytes = new Uint8Array(Math.ceil(GENERATED_SLUG_LENGTH / 2));
  crypto.getRandomValues(bytes);
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return hex.slice(0, GENERATED_SLUG_LENGTH);
}
