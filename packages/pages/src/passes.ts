import { createHmac, timingSafeEqual } from 'node:crypto';
import { slugKey, slugProblem, type Viewer } from '@convo/domain';
import { getCookie, setCookie } from 'hono/cookie';
import { COOKIE_VALUE, cookieOptions, type SiteContext, type SiteDeps, viewerOf } from './env.ts';

/*
 * A visitor who started a conversation on an intake page is recognised on that device by a pass:
 * a cookie whose hash the database keeps beside each conversation it started. It opens those
 * conversations and nothing else, and signs nobody in (the mailed link does that). An embed in
 * another site's frame gets no cookie of ours, so its landing carries the pass in its address.
 */

export const PASS_COOKIE = 'convo_pass';
export const PASS_TTL_SECONDS = 90 * 24 * 3600;

/** This device's pass: the cookie (or, in an embed, `?pass=`) when it has the form of one. */
export function passOf(c: SiteContext): string | null {
  const given = c.req.query('pass') ?? getCookie(c, PASS_COOKIE);
  return given !== undefined && COOKIE_VALUE.test(given) ? given : null;
}

/** Keeps the pass on this device (the cookie's 90 days start again with each conversation it starts). */
export const keepPass = (c: SiteContext, pass: string) =>
  setCookie(c, PASS_COOKIE, pass, { ...cookieOptions(c.env.account), maxAge: PASS_TTL_SECONDS });

/**
 * Who reads the conversation at `slug`: the signed-in person; else, when this device's pass holds
 * a start of it, the visitor who started it (`viewer`), or for an anonymous start the
 * conversation itself (`granted`, its id).
 */
export async function readerOf(
  deps: SiteDeps,
  c: SiteContext,
  slug: string,
): Promise<{ viewer: Viewer; granted: number | null }> {
  const viewer = viewerOf(c);
  const pass = viewer ? null : passOf(c);
  if (!pass || slugProblem(slug)) return { viewer, granted: null };
  const target = await deps.site.conversationAccess(c.env.account.id, slugKey(slug));
  const held = target ? await deps.intake.pass(c.env.account.id, pass, target.id) : null;
  if (!held || !target) return { viewer, granted: null };
  // A person's start opens it while they are a member (the team may take them out).
  return held.userId === null
    ? { viewer: null, granted: target.id }
    : { viewer: { userId: held.userId, teamRole: null }, granted: null };
}

/** How long an embedded intake form's token is good for. */
const FORM_TOKEN_SECONDS = 24 * 3600;

const encoder = new TextEncoder();

const mac = (key: string, payload: string) =>
  createHmac('sha256', key).update(`intake-form:${payload}`).digest('base64url');

/**
 * The form token of an embedded intake form, which has no cookie to bind a CSRF token to: when it
 * was issued, for which account and page, signed with the site's key. It carries no authority (an
 * embed's post is nobody's but the visitor's own); it proves the form came from the page.
 */
export function embedFormToken(key: string, accountId: number, pageId: number, now = Date.now()): string {
  const issued = Math.floor(now / 1000);
  return `${issued}.${mac(key, `${accountId}.${pageId}.${issued}`)}`;
}

export function embedFormTokenValid(key: string, accountId: number, pageId: number, token: string, now = Date.now()) {
  const parsed = /^(\d{1,12})\.([\w-]{43})$/.exec(token);
  if (!parsed) return false;
  const issued = Number(parsed[1]);
  const age = Math.floor(now / 1000) - issued;
  if (age < 0 || age > FORM_TOKEN_SECONDS) return false;
  const expected = encoder.encode(mac(key, `${accountId}.${pageId}.${issued}`));
  const given = encoder.encode(parsed[2] ?? '');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
