import { z } from 'zod';

/**
 * Text the service stores must read back as it was answered: well-formed Unicode (a lone
 * surrogate would come back as U+FFFD from PostgreSQL) and no NUL (PostgreSQL text cannot hold one).
 */
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** String.prototype.isWellFormed, without asking every client's compiler for ES2024. */
export const isWellFormed = (text: string): boolean => !LONE_SURROGATE.test(text);

/** Every lone surrogate (replace() starts a global pattern from the beginning each time). */
const LONE_SURROGATES = new RegExp(LONE_SURROGATE, 'g');

/**
 * String.prototype.toWellFormed: each lone surrogate becomes U+FFFD, as it would on its way to
 * PostgreSQL as UTF-8. For text the service cut itself (an excerpt, a subject at 255 characters)
 * on its way into a JSON parameter, which PostgreSQL refuses with a lone surrogate's escape in it.
 */
export const toWellFormed = (text: string): string => text.replace(LONE_SURROGATES, '\uFFFD');

export function textProblem(what: string, text: string): string | null {
  if (!isWellFormed(text)) return `${what} must be valid Unicode text (no lone surrogates)`;
  if (text.includes('\u0000')) return `${what} must not contain NUL characters`;
  return null;
}

/**
 * A rule as a zod refinement, for every edge that parses input with zod (the API's procedures, the
 * seed format): each schema refines through the rule's one function, so no edge states it again.
 */
export const byRule =
  (problem: (text: string) => string | null) =>
  (text: string, ctx: z.core.$RefinementCtx<string>): void => {
    const message = problem(text);
    if (message) ctx.addIssue({ code: 'custom', message, input: text });
  };

/** Any other stored text: well-formed Unicode without NUL. */
export const ZText = (what: string) => z.string().superRefine(byRule((text) => textProblem(what, text)));
