import { createHmac, timingSafeEqual } from 'node:crypto';
import { slugKey, slugProblem, type Viewer } from '@convo/domain';
import { getCookie, setCookie } from 'hono/cookie';
import { cookieOptions, type SiteContext, type SiteDeps, viewerOf } from './env.ts';

/*
 * A visitor who started a conversation on an intake page is recognised on that device by a pass:
 * a cookie naming the conversations it started (and whose start each was), signed with the
 * site's key, so the server keeps nothing for it and nobody can write one. It opens those
 * conversations and nothing else, and signs nobody in (the mailed link does that). An embed in
 * another site's frame gets no cookie of ours, so its landing carries the pass in its address.
 */

export const PASS_COOKIE = 'convo_pass';
export const PASS_TTL_SECONDS = 90 * 24 * 3600;
/** The most recent starts a pass remembers (the cookie stays far under a browser's 4 KB). */
const PASS_GRANTS = 30;

/** Conversation id → the person whose start it was (null: an anonymous start). */
export type PassGrants = Map<number, number | null>;

const encoder = new TextEncoder();

const mac = (key: string, purpose: string, payload: string) =>
  createHmac('sha256', key).update(`${purpose}:${payload}`).digest('base64url');

/** Compared as bytes in constant time: how long it took says nothing about how much matched. */
const same = (a: string, b: string) => {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** A pass's value: `<conversation>-<person or 0>` grants joined by `.`, then `~` and their MAC. */
const PASS = /^((?:\d{1,10}-\d{1,10})(?:\.\d{1,10}-\d{1,10}){0,49})~([\w-]{43})$/;

/** The pass this request carries: in an embed's address (`?pass=`), else the cookie. */
export const passValue = (c: SiteContext): string | undefined => c.req.query('pass') ?? getCookie(c, PASS_COOKIE);

/** What this device's pass holds (the cookie, or in an embed `?pass=`), when it is one we signed. */
export const passOf = (deps: SiteDeps, c: SiteContext): Promise<PassGrants> =>
  readPass(deps, c.env.account.id, passValue(c));

/** What a pass's value holds, when it is one we signed for this account; else nothing. */
async function readPass(deps: SiteDeps, accountId: number, given: string | undefined): Promise<PassGrants> {
  const parsed = given === undefined ? null : PASS.exec(given);
  const grants: PassGrants = new Map();
  if (!parsed?.[1] || !parsed[2]) return grants;
  const key = await deps.notifications.signingKey();
  if (!same(mac(key, `pass:${accountId}`, parsed[1]), parsed[2])) return grants;
  for (const grant of parsed[1].split('.')) {
    const [conversation, person] = grant.split('-').map(Number);
    if (conversation) grants.set(conversation, person ? person : null);
  }
  return grants;
}

/** The pass with one more start (the newest last, the oldest let go past PASS_GRANTS), as a value. */
export async function passWith(
  deps: SiteDeps,
  c: SiteContext,
  grants: PassGrants,
  conversationId: number,
  personId: number | null,
): Promise<string> {
  grants.delete(conversationId);
  grants.set(conversationId, personId);
  return signPass(deps, c, grants);
}

async function signPass(deps: SiteDeps, c: SiteContext, grants: PassGrants): Promise<string> {
  const kept = [...grants].slice(-PASS_GRANTS).map(([conversation, person]) => `${conversation}-${person ?? 0}`);
  const payload = kept.join('.');
  const key = await deps.notifications.signingKey();
  return `${payload}~${mac(key, `pass:${c.env.account.id}`, payload)}`;
}

/** Keeps the pass on this device (its 90 days start again with each conversation it starts). */
export const keepPass = (c: SiteContext, pass: string) =>
  setCookie(c, PASS_COOKIE, pass, { ...cookieOptions(c.env.account), maxAge: PASS_TTL_SECONDS });

/** The pass an address carried (an embed's landing, opened in a tab of its own), kept with the cookie's. */
export async function keepCarriedPass(deps: SiteDeps, c: SiteContext): Promise<void> {
  const carried = await readPass(deps, c.env.account.id, c.req.query('pass'));
  if (carried.size === 0) return;
  const held = await readPass(deps, c.env.account.id, getCookie(c, PASS_COOKIE));
  for (const [conversation, person] of carried) {
    held.delete(conversation);
    held.set(conversation, person);
  }
  keepPass(c, await signPass(deps, c, held));
}

/**
 * What a pass opens of one conversation: an anonymous start's conversation, or the person whose
 * start it was while they are still a member (the team may take them out); else nothing.
 */
export function passReader(grants: PassGrants, conversationId: number, memberIds: readonly number[]) {
  if (!grants.has(conversationId)) return null;
  const person = grants.get(conversationId) ?? null;
  if (person === null) return { viewer: null, granted: conversationId };
  return memberIds.includes(person) ? { viewer: { userId: person, teamRole: null }, granted: null } : null;
}

/**
 * Who reads the conversation at `slug`: the signed-in person; else, when this device's pass holds
 * a start of it, the visitor who started it (`viewer`), or for an anonymous start the
 * conversation itself (`granted`, its id).
 */
export const readerOf = (deps: SiteDeps, c: SiteContext, slug: string) =>
  readerFrom(deps, c.env.account.id, viewerOf(c), passValue(c), slug);

/** The same, from what a request carried: who is signed in (or nobody), and its pass's value. */
export async function readerFrom(
  deps: SiteDeps,
  accountId: number,
  viewer: Viewer,
  pass: string | undefined,
  slug: string,
): Promise<{ viewer: Viewer; granted: number | null }> {
  if (viewer || slugProblem(slug)) return { viewer, granted: null };
  const grants = await readPass(deps, accountId, pass);
  if (grants.size === 0) return { viewer, granted: null };
  const target = await deps.site.conversationAccess(accountId, slugKey(slug));
  return (target && passReader(grants, target.id, target.memberIds)) ?? { viewer, granted: null };
}

/** How long an embedded intake form's token is good for. */
const FORM_TOKEN_SECONDS = 24 * 3600;

/**
 * The form token of an embedded intake form, which has no cookie to bind a CSRF token to: when it
 * was issued, for which account and page, signed with the site's key. It carries no authority (an
 * embed's post is nobody's but the visitor's own); it proves the form came from the page.
 */
export function embedFormToken(key: string, accountId: number, pageId: number, now = Date.now()): string {
  const issued = Math.floor(now / 1000);
  return `${issued}.${mac(key, 'intake-form', `${accountId}.${pageId}.${issued}`)}`;
}

export function embedFormTokenValid(key: string, accountId: number, pageId: number, token: string, now = Date.now()) {
  const parsed = /^(\d{1,12})\.([\w-]{43})$/.exec(token);
  if (!parsed) return false;
  const issued = Number(parsed[1]);
  const age = Math.floor(now / 1000) - issued;
  if (age < 0 || age > FORM_TOKEN_SECONDS) return false;
  return same(mac(key, 'intake-form', `${accountId}.${pageId}.${issued}`), parsed[2] ?? '');
}
