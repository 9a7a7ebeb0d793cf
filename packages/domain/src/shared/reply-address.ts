/*
 * Reply by e-mail (issue 44): the address a notification's `Reply-To` names. Each carries a token
 * of 130 random bits, written in lowercase base32 (a mail server may fold an address's case), bound
 * to one person and one conversation (or thread). Only its SHA-256 is kept, as with API tokens:
 * whoever reads the table cannot post as anyone. Our mail's `Message-ID` is another random name,
 * kept beside it, so a reply that lost the `+token` part of its address still finds its
 * conversation through `In-Reply-To`, and only from the same person.
 */

/** What a reply address is issued for, and kept with the mail it rides in. */
export interface ReplyAddressGrant {
  /** The token's SHA-256, hex. */
  tokenHash: string;
  /** The Message-ID of the mail that carries it, without its angle brackets. */
  messageId: string;
  userId: number;
  conversationId: number;
  /** The thread's first message, when the mail was about one thread alone. */
  parentId: number | null;
  /** Days the address takes replies. */
  days: number;
}

/** The local part before the token: `reply+<token>@<domain>`. */
export const REPLY_LOCAL_PREFIX = 'reply+';

/** The line our notification mails carry above their text: a reply is cut where it is quoted. */
export const REPLY_ABOVE_MARKER = '## Reply above this line ##';

/** Days a reply address takes replies unless the operator says (REPLY_ADDRESS_DAYS). */
export const DEFAULT_REPLY_ADDRESS_DAYS = 30;

/** Replies one address takes in all (a person who answers one digest again and again). */
export const REPLY_ADDRESS_MAX_USES = 50;

/** Reply mails taken in from one person an hour, and for one account, unless the operator says. */
export const DEFAULT_INBOUND_LIMITS = { perPersonPerHour: 60, perAccountPerHour: 5_000 };

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** 26 characters of base32: 130 random bits. */
const TOKEN = /^[a-z2-7]{26}$/;

function randomBase32(chars: number): string {
  const bytes = new Uint8Array(chars);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => BASE32[b & 31]).join('');
}

/** The hex SHA-256 of a token, as it is kept and looked up. */
export async function replyTokenHash(token: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A new reply address on `domain` for one person and conversation (or thread): the address to put
 * in `Reply-To`, the Message-ID to give the mail, and the grant to keep with it.
 */
export async function issueReplyAddress(
  domain: string,
  target: { userId: number; conversationId: number; parentId: number | null },
  days: number = DEFAULT_REPLY_ADDRESS_DAYS,
): Promise<{ address: string; messageId: string; grant: ReplyAddressGrant }> {
  const token = randomBase32(26);
  const messageId = `${randomBase32(26)}@${domain}`;
  return {
    address: `${REPLY_LOCAL_PREFIX}${token}@${domain}`,
    messageId,
    grant: { tokenHash: await replyTokenHash(token), messageId, ...target, days },
  };
}

/** The token of `reply+<token>@<domain>` (the domain compared without case); null for any other address. */
export function replyTokenOf(address: string, domain: string): string | null {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== domain.toLowerCase()) return null;
  const local = address.slice(0, at).toLowerCase();
  if (!local.startsWith(REPLY_LOCAL_PREFIX)) return null;
  const token = local.slice(REPLY_LOCAL_PREFIX.length);
  return TOKEN.test(token) ? token : null;
}

/** A mail address as two are compared: trimmed, without case. */
export const normalAddress = (address: string): string => address.trim().toLowerCase();

/** The words of a reply above our marker's quoted line (and the "On … wrote:" line a client puts before it). */
export function aboveMarker(text: string): string {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((line) => line.includes(REPLY_ABOVE_MARKER));
  if (at < 0) return text;
  let end = at;
  // The quoting client's own lead-in ("On Mon, … Pat wrote:"), and blank lines, go with the quote.
  while (end > 0 && /^\s*(>.*)?$/.test(lines[end - 1] ?? '')) end--;
  if (end > 0 && /wrote:\s*$/i.test(lines[end - 1] ?? '')) end--;
  return lines.slice(0, end).join('\n');
}
