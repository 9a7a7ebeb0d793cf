import type { SignedIn, SiteAccount, Viewer } from '@convo/domain';
import type { Context } from 'hono';
import type { SiteVisit } from './deps.ts';

/* What each request to an account's site carries through Hono, and helpers to read it. */

export type SiteEnv = {
  Bindings: { account: SiteAccount; visit: SiteVisit };
  Variables: {
    /** The signed-in person, if any. */
    signedIn: SignedIn | null;
    /** The CSRF token every form of this response carries, bound to the session or visitor cookie. */
    csrf: string;
    /** A visitor cookie made for this request, set only if the page carries a form; null when there is one. */
    newVisitor: string | null;
  };
};

export type SiteContext = Context<SiteEnv>;

/** Who is viewing: the signed-in person, or nobody known (null). */
export const viewerOf = (c: SiteContext): Viewer =>
  c.var.signedIn ? { userId: c.var.signedIn.user.id, teamRole: c.var.signedIn.teamRole } : null;

/** A form field given once; a field sent twice is not trusted to mean either value. */
export const field = (fields: Map<string, string[]>, name: string): string | undefined => {
  const values = fields.get(name);
  return values?.length === 1 ? values[0] : undefined;
};
