import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type ConversationAccess, slugKey, slugProblem, type Viewer } from '@convo/domain';
import { getCookie, setCookie } from 'hono/cookie';
import { cookieOptions } from './cookies.ts';
import type { SiteDeps } from './deps.ts';
import { type SiteContext, viewerOf } from './request.ts';

/*
 * A visitor who started a conversation on an intake page is recognised on that device by a pass:
 * a cookie naming the conversations it started (whose start each was, and when), signed with the
 * site's key, so nobody can write one. It opens those conversations and nothing else, for
 * PASS_LIFETIME_SECONDS from the start, and signs nobody in (the mailed link does that). The team
 * ends every starting device's access to a conversation from its members (`passesValidAfter`).
 *
 * Nothing that authorises travels in an address: an embed's start reaches its frame by a one-time
 * code (taken on the frame's first load, where the pass becomes the frame's own cookie), and its
 * "Reply on" button carries the start into a tab of the site's own by a form's body, not a link.
 */

export const PASS_COOKIE = 'convo_pass';
/**
 * The pass of a frame on another site: `SameSite=None; Secure; Partitioned`, so it is sent only in
 * frames on the site that framed the start (CHIPS), and never read by the account's own pages.
 */
export const EMBED_PASS_COOKIE = 'convo_embed_pass';
/** How long a pass opens what it started: 30 days from the start. */
export const PASS_LIFETIME_SECONDS = 30 * 24 * 3600;
/** How long an embed's one-time code waits for its frame to load. */
export const PASS_CODE_SECONDS = 600;
/** How long the "Reply on" button of an embed carries the start to a tab of its own. */
const HANDOFF_SECONDS = 3600;
/** The most recent starts a pass remembers (the cookie stays far under a browser's 4 KB). */
const PASS_GRANTS = 30;

/** One start a pass holds: whose it was (null: an anonymous start) and when (epoch ms). */
export interface PassGrant {
  person: number | null;
  issued: number;
}

/** Conversation id → the start this device made of it. */
export type PassGrants = Map<number, PassGrant>;

/** SHA-256's block: a key's pads are this long (RFC 2104). */
const BLOCK = 64;
/** The HMAC pads of the one key a process signs with (the site's), made when it is first used. */
let pads: { key: string; inner: Buffer; outer: Buffer } | null = null;

/**
 * HMAC-SHA256 (RFC 2104) of `<purpose>:<payload>` under `key`, made of two one-shot digests
 * (crypto.hash): the same MAC as createHmac (passes.test.ts holds them together), which in a
 * busy server costs some 10 µs against 1 µs for a one-shot digest (bench/README, the beacon).
 */
const mac = (key: string, purpose: string, payload: string) => {
  if (pads?.key !== key) {
    const bytes = Buffer.from(key);
    const k = bytes.length > BLOCK ? hash('sha256', bytes, 'buffer') : bytes;
    const inner = Buffer.alloc(BLOCK, 0x36);
    const outer = Buffer.alloc(BLOCK, 0x5c);
    for (const [i, byte] of k.entries()) {
      inner.writeUInt8(0x36 ^ byte, i);
      outer.writeUInt8(0x5c ^ byte, i);
    }
    pads = { key, inner, outer };
  }
  const inside = hash('sha256', Buffer.concat([pads.inner, Buffer.from(`${purpose}:${payload}`)]), 'hex');
  return hash('sha256', Buffer.concat([pads.outer, Buffer.from(inside, 'hex')]), 'base64url');
};

/** Compared as bytes in constant time: how long it took says nothing about how much matched. */
const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** A grant's text: `<conversation>-<person or 0>-<issued ms>`. */
const GRANT = String.raw`\d{1,10}-\d{1,10}-\d{1,13}`;
const ONE_GRANT = new RegExp(`^${GRANT}$`);
/** A pass's value: grants joined by `.`, then `~` and their MAC. */
const PASS = new RegExp(`^(${GRANT}(?:\\.${GRANT}){0,49})~([\\w-]{43})$`);

/** A handoff: the grant, until when (epoch seconds), and their MAC. */
const HANDOFF = new RegExp(`^(${GRANT})\\.(\\d{1,12})\\.([\\w-]{43})$`);

const grantText = (conversation: number, g: PassGrant) => `${conversation}-${g.person ?? 0}-${g.issued}`;

function parseGrant(text: string): [number, PassGrant] | null {
  if (!ONE_GRANT.test(text)) return null;
  const [conversation, person, issued] = text.split('-').map(Number);
  return conversation && issued ? [conversation, { person: person ? person : null, issued }] : null;
}

/** A start's grant, issued when it started (epoch ms). */
export const newGrant = (conversationId: number, personId: number | null, issued: number): string =>
  grantText(conversationId, { person: personId, issued });

/** What a pass's value holds, when it is one we signed for this account; else nothing. */
async function readPass(deps: SiteDeps, accountId: number, given: string | undefined): Promise<PassGrants> {
  const parsed = given === undefined ? null : PASS.exec(given);
  const grants: PassGrants = new Map();
  if (!parsed?.[1] || !parsed[2]) return grants;
  const key = await deps.secrets.signingKey();
  if (!same(mac(key, `pass:${accountId}`, parsed[1]), parsed[2])) return grants;
  for (const text of parsed[1].split('.')) {
    const grant = parseGrant(text);
    if (grant) grants.set(...grant);
  }
  return grants;
}

/** `grants` with one more start (the newest last, the oldest let go past PASS_GRANTS). */
export function withGrant(grants: PassGrants, text: string): PassGrants {
  const grant = parseGrant(text);
  if (!grant) return grants;
  const next = new Map(grants);
  next.delete(grant[0]);
  next.set(...grant);
  return next;
}

async function signPass(deps: SiteDeps, accountId: number, grants: PassGrants): Promise<string> {
  const payload = [...grants]
    .slice(-PASS_GRANTS)
    .map(([conversation, g]) => grantText(conversation, g))
    .join('.');
  const key = await deps.secrets.signingKey();
  return `${payload}~${mac(key, `pass:${accountId}`, payload)}`;
}

/** What this device's passes hold: the site's own cookie and, in a frame, the embed's. */
export async function passOf(deps: SiteDeps, c: SiteContext): Promise<PassGrants> {
  const accountId = c.env.account.id;
  const own = await readPass(deps, accountId, getCookie(c, PASS_COOKIE));
  const framed = await readPass(deps, accountId, getCookie(c, EMBED_PASS_COOKIE));
  for (const [conversation, g] of framed) if (!own.has(conversation)) own.set(conversation, g);
  return own;
}

/** Keeps the site's own pass on this device, with one more start. */
export async function keepPass(deps: SiteDeps, c: SiteContext, grant: string): Promise<void> {
  const held = await readPass(deps, c.env.account.id, getCookie(c, PASS_COOKIE));
  const pass = await signPass(deps, c.env.account.id, withGrant(held, grant));
  setCookie(c, PASS_COOKIE, pass, { ...cookieOptions(c.env.account), maxAge: PASS_LIFETIME_SECONDS });
}

/** Keeps a frame's pass (partitioned by the site around it), with one more start. */
export async function keepEmbedPass(deps: SiteDeps, c: SiteContext, grant: string): Promise<void> {
  const held = await readPass(deps, c.env.account.id, getCookie(c, EMBED_PASS_COOKIE));
  const pass = await signPass(deps, c.env.account.id, withGrant(held, grant));
  setCookie(c, EMBED_PASS_COOKIE, pass, {
    path: '/',
    httpOnly: true,
    sameSite: 'None',
    secure: true,
    partitioned: true,
    maxAge: PASS_LIFETIME_SECONDS,
  });
}

/** A one-time code's stored form: its SHA-256 (the code itself is only ever in a frame's first address). */
export const passCodeHash = (code: string) => hash('sha256', code, 'hex');

/**
 * Whether a start still opens its conversation: within its lifetime, and not issued before the
 * team ended the starting devices' access.
 */
export const grantLive = (g: PassGrant, passesValidAfter: number | null, now = Date.now()): boolean =>
  now - g.issued < PASS_LIFETIME_SECONDS * 1000 && (passesValidAfter === null || g.issued > passesValidAfter);

/**
 * What a pass opens of one conversation: an anonymous start's conversation, or the person whose
 * start it was while they are still a member (the team may take them out); else nothing.
 */
export function passReader(grants: PassGrants, target: ConversationAccess) {
  const grant = grants.get(target.id);
  if (!grant || !grantLive(grant, target.passesValidAfter)) return null;
  if (grant.person === null) return { viewer: null, granted: target.id };
  return target.memberIds.includes(grant.person)
    ? { viewer: { userId: grant.person, teamRole: null }, granted: null }
    : null;
}

/**
 * The conversations this device's pass opens now, each checked as its page checks it (a start the
 * team did not end, by a person still a member), in one read.
 */
export async function passOpened(deps: SiteDeps, c: SiteContext): Promise<number[]> {
  const grants = await passOf(deps, c);
  const targets = await deps.site.conversationAccessByIds(c.env.account.id, [...grants.keys()]);
  return targets.filter((target) => passReader(grants, target)).map((target) => target.id);
}

/**
 * Who reads the conversation at `slug`: the signed-in person; else, when this device's pass holds
 * a start of it, the visitor who started it (`viewer`), or for an anonymous start the
 * conversation itself (`granted`, its id).
 */
export const readerOf = async (deps: SiteDeps, c: SiteContext, slug: string) =>
  readerFrom(deps, c.env.account.id, viewerOf(c), viewerOf(c) ? new Map() : await passOf(deps, c), slug);

/** The same, from what a request carried: who is signed in (or nobody), and its pass's grants. */
export async function readerFrom(
  deps: SiteDeps,
  accountId: number,
  viewer: Viewer,
  grants: PassGrants,
  slug: string,
): Promise<{ viewer: Viewer; granted: number | null; grant: string | null }> {
  const nobody = { viewer, granted: null, grant: null };
  if (viewer || slugProblem(slug) || grants.size === 0) return nobody;
  const target = await deps.site.conversationAccess(accountId, slugKey(slug));
  const reader = target && passReader(grants, target);
  const grant = target && grants.get(target.id);
  return reader && grant ? { ...reader, grant: grantText(target.id, grant) } : nobody;
}

/**
 * The "Reply on" button of an embed's pass: the start it carries to a tab of the site's own, for an
 * hour, signed; sent in a form's body (never in an address), taken by `POST /c/<slug>/pass`.
 */
export function handoffToken(key: string, accountId: number, grant: string, now = Date.now()): string {
  const until = Math.floor(now / 1000) + HANDOFF_SECONDS;
  return `${grant}.${until}.${mac(key, 'pass-handoff', `${accountId}.${grant}.${until}`)}`;
}

/** The grant a handoff carries, when we signed it for this account and it is within its hour. */
export function handoffGrant(key: string, accountId: number, token: string, now = Date.now()): string | null {
  const parsed = HANDOFF.exec(token);
  if (!parsed?.[1] || !parsed[2] || !parsed[3]) return null;
  if (Number(parsed[2]) < Math.floor(now / 1000)) return null;
  return same(mac(key, 'pass-handoff', `${accountId}.${parsed[1]}.${parsed[2]}`), parsed[3]) ? parsed[1] : null;
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

/**
 * An intake form's own token (`submit`, which makes the same form sent twice start once), bound to
 * the form's CSRF token (the device's cookie) or, in an embed, its signed form token: a random
 * part and its MAC. Sent again from another device, it is not that device's form, and opens
 * nothing of what it started.
 */
export function intakeSubmitKey(key: string, formToken: string): string {
  const nonce = randomBytes(12).toString('base64url');
  return `${nonce}${mac(key, 'intake-submit', `${formToken}.${nonce}`).slice(0, 27)}`;
}

/** Whether a form's `submit` was made for this form token (by this device). */
export function intakeSubmitKeyIsFor(key: string, formToken: string, submitKey: string): boolean {
  const nonce = submitKey.slice(0, 16);
  return (
    submitKey.length === 43 &&
    same(mac(key, 'intake-submit', `${formToken}.${nonce}`).slice(0, 27), submitKey.slice(16))
  );
}

/** How long a page's play ticket is good for: a page left open for a day still reports its plays. */
const PLAY_TICKET_SECONDS = 24 * 3600;
/** A play ticket: `<viewer id or 0>.<until, epoch seconds>.<MAC>`. */
const PLAY_TICKET = /^(\d{1,10})\.(\d{1,12})\.([\w-]{43})$/;

/**
 * A player's play ticket (the receipt's beacon, routes/plays.ts): given by a page only for a
 * recording whose play by this reader is a receipt (reportsPlay), it says so, signed, for that
 * message in that conversation (by its slug), that visitor's cookie (its CSRF token) and the
 * person signed in then (0: nobody), for a day. So the beacon reads nothing to know it may count:
 * a ticket for another message, slug, cookie or account holds for none of them.
 */
export function playTicket(
  key: string,
  to: { accountId: number; slug: string; messageId: number; csrf: string; viewerId: number | null },
  now = Date.now(),
): string {
  const viewer = to.viewerId ?? 0;
  const until = Math.floor(now / 1000) + PLAY_TICKET_SECONDS;
  return `${viewer}.${until}.${mac(key, 'play', `${to.accountId}.${slugKey(to.slug)}.${to.messageId}.${to.csrf}.${viewer}.${until}`)}`;
}

/**
 * Whose play a beacon's ticket reports (the viewer signed in when the page gave it; null: nobody),
 * when we signed it for this message, slug and cookie and it is within its day; else undefined.
 */
export function playTicketViewer(
  key: string,
  to: { accountId: number; slug: string; messageId: number; csrf: string },
  ticket: string,
  now = Date.now(),
): { viewerId: number | null } | undefined {
  const parsed = PLAY_TICKET.exec(ticket);
  if (!parsed?.[1] || !parsed[2] || !parsed[3] || to.csrf === '') return undefined;
  if (Number(parsed[2]) < Math.floor(now / 1000)) return undefined;
  const signed = `${to.accountId}.${slugKey(to.slug)}.${to.messageId}.${to.csrf}.${parsed[1]}.${parsed[2]}`;
  if (!same(mac(key, 'play', signed), parsed[3])) return undefined;
  const viewer = Number(parsed[1]);
  return { viewerId: viewer === 0 ? null : viewer };
}
