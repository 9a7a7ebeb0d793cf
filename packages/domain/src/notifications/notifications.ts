import type { SiteAccount, TeamRole } from '../records.ts';
import type { MailOutbox, OutgoingMail } from '../shared/mail.ts';
import type { SiteSecrets } from '../shared/secrets.ts';
import { formatNiceTime } from '../shared/time.ts';
import { conversationUrl, messageReadUrl } from '../shared/urls.ts';

/*
 * Telling people that someone answered. Who is told: the conversation's members and followers
 * (followers only while it is public), but the author, and nobody who muted it or all of the
 * account's mail (the store's fan-out holds that rule in SQL). When: one mail per person and
 * conversation per batch window, carrying every message since the first one it waited for. How to
 * stop: a signed link in each mail (RFC 8058 one-click for the conversation, and one for all of the
 * account's mail), which needs no sign-in.
 */

/** A mail waits this long after its first message for more, then carries them all (NOTIFY_BATCH_MINUTES). */
export const DEFAULT_NOTIFY_BATCH_MINUTES = 5;
/** Messages quoted in one mail; more are counted, and the page has them. */
export const NOTIFY_MAX_MESSAGES = 20;
/** Characters of each message a mail quotes. */
export const NOTIFY_EXCERPT = 500;

export interface DigestMessage {
  id: number;
  /** Null for an anonymous message. */
  authorName: string | null;
  authorTeamRole: TeamRole | null;
  text: string;
  messageType: string;
  createdAt: bigint;
  /** Its recording has a poster (mails show it where the conversation is public). */
  poster: boolean;
  /** An internal note (only the team is mailed one). */
  internal: boolean;
  /** The first message of the thread it replies in; null for a message of the conversation itself. */
  parentId: number | null;
}

/** A pending mail that fell due: for whom, about what, and everything that arrived since it began. */
export interface DueDigest {
  account: SiteAccount;
  conversation: { id: number; title: string; slug: string; anyoneCanPost: boolean };
  recipient: { id: number; name: string; email: string };
  /**
   * Its first message started the conversation on an intake page: that page's name (the mail is
   * then "New conversation from … via …", sent at once); null for any other mail.
   */
  startedVia: string | null;
  /** Oldest first, at most NOTIFY_MAX_MESSAGES of them. */
  messages: DigestMessage[];
  /** How many messages arrived in all (the mail says how many it leaves out). */
  total: number;
}

export interface NotificationStore {
  /** Turns up to `limit` posted messages into pending mails (one per person and conversation), due `batchSeconds` after their first message. */
  fanOut(limit: number, batchSeconds: number): Promise<number>;
  /**
   * Takes up to `limit` due mails, each handed to `send` with an outbox in the same transaction:
   * a taken mail is queued or, if anything fails, left to be taken again.
   */
  takeDue(limit: number, send: (digest: DueDigest, outbox: MailOutbox) => Promise<void>): Promise<number>;
  /** No more mail about one conversation (or, null, about any of the account's) for this person. */
  mute(accountId: number, userId: number, conversationId: number | null): Promise<void>;
  unmute(accountId: number, userId: number, conversationId: number | null): Promise<void>;
  follow(accountId: number, userId: number, conversationId: number): Promise<void>;
  unfollow(accountId: number, userId: number, conversationId: number): Promise<void>;
  /** What this person gets of a conversation's mail, and of the account's. */
  mailState(
    accountId: number,
    userId: number,
    conversationId: number,
  ): Promise<{ member: boolean; following: boolean; muted: boolean; mutedAll: boolean }>;
}

// ---- Signed links ----------------------------------------------------------------------------

/** What a signed link stops: one conversation's mail, or (conversation 0) all of the account's. */
export interface MuteTarget {
  accountId: number;
  userId: number;
  /** 0: every conversation of the account. */
  conversationId: number;
}

const encoder = new TextEncoder();

const base64url = (bytes: ArrayBuffer): string =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

async function signature(key: string, payload: string): Promise<string> {
  const hmac = await crypto.subtle.importKey('raw', encoder.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return base64url(await crypto.subtle.sign('HMAC', hmac, encoder.encode(`mute:${payload}`)));
}

const payloadOf = (t: MuteTarget) => `${t.accountId}.${t.userId}.${t.conversationId}`;

/** The token of an unsubscribe link: what it stops, and its HMAC-SHA256 under the site's key. */
export async function muteToken(key: string, target: MuteTarget): Promise<string> {
  return `${payloadOf(target)}.${await signature(key, payloadOf(target))}`;
}

/** What a token stops, when its signature holds; null for anything else. */
export async function readMuteToken(key: string, token: string): Promise<MuteTarget | null> {
  const parsed = /^(\d{1,10})\.(\d{1,10})\.(\d{1,10})\.([\w-]{43})$/.exec(token);
  if (!parsed) return null;
  const target = { accountId: Number(parsed[1]), userId: Number(parsed[2]), conversationId: Number(parsed[3]) };
  const expected = await signature(key, payloadOf(target));
  // Compared as HMACs of their own, so the time taken says nothing about how much of it matched.
  const [a, b] = await Promise.all([signature(key, expected), signature(key, parsed[4] as string)]);
  return a === b ? target : null;
}

// ---- The mail ----------------------------------------------------------------------------------

/** A message's words as a mail quotes them: cut to NOTIFY_EXCERPT characters. */
export const mailExcerpt = (text: string): string => {
  const chars = Array.from(text.trim());
  return chars.length <= NOTIFY_EXCERPT ? chars.join('') : `${chars.slice(0, NOTIFY_EXCERPT - 1).join('')}…`;
};

const quoted = (text: string) =>
  text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');

/** How a mail names a message's recording ("a video recording"); its caption is quoted below it. */
const RECORDING_NAMES: Record<string, string> = {
  video: 'a video recording',
  screen: 'a screen recording',
  audio: 'an audio recording',
};
export const mailRecordingName = (kind: string): string => RECORDING_NAMES[kind] ?? 'a recording';

/** How a mail names a message's author: "Someone (anonymous)", or with the team's badge; a note says it is one. */
export const mailByline = (m: DigestMessage, team: string) =>
  `${m.authorName === null ? 'Someone (anonymous)' : m.authorTeamRole ? `${m.authorName} (${team} team)` : m.authorName}${
    m.internal ? ', internal note (only the team sees it)' : ''
  }${m.parentId !== null ? ', replying in a thread' : ''}`;

/** Where a notification's links lead: stop this conversation's mail, all of it, the settings. */
export interface NotificationLinks {
  muteUrl: string;
  muteAllUrl: string;
  settingsUrl: string;
}

/** What a notification says above its messages ("New conversation from …", or how many are new). */
export function notificationHeading(d: DueDigest): { subject: string; lead: string } {
  const team = d.account.name;
  const first = d.messages[0];
  const started =
    d.startedVia !== null && first
      ? `New conversation from ${first.authorName ?? 'a visitor'} via ${d.startedVia}`
      : null;
  const subject =
    started ??
    (d.total === 1 && first
      ? `${first.authorName ?? 'Someone'} wrote in "${d.conversation.title}"`
      : `${d.total} new messages in "${d.conversation.title}"`);
  const lead = started
    ? `${started} on ${team}: "${d.conversation.title}"`
    : `${d.total === 1 ? 'A new message' : `${d.total} new messages`} in "${d.conversation.title}" on ${team}:`;
  return { subject: `${subject} on ${team}`, lead };
}

/** The mail of a due digest: who wrote, what (quoted), where; and the two ways to stop. */
export function notificationMail(d: DueDigest, links: NotificationLinks): OutgoingMail {
  const team = d.account.name;
  const heading = notificationHeading(d);
  const url = conversationUrl(d.account, d.conversation.slug);
  const parts = d.messages.map((m) =>
    [
      `${mailByline(m, team)}, ${formatNiceTime(m.createdAt)}:`,
      ...(m.messageType === 'text' ? [] : [`> (${mailRecordingName(m.messageType)})`]),
      ...(m.text.trim() === '' ? [] : [quoted(mailExcerpt(m.text))]),
      messageReadUrl(url, m),
    ].join('\n'),
  );
  const left = d.total - d.messages.length;
  return {
    to: d.recipient.email,
    subject: heading.subject,
    text: [
      heading.lead,
      '',
      parts.join('\n\n'),
      ...(left > 0 ? ['', `…and ${left} more on the page.`] : []),
      '',
      `Answer on the page: ${url}#reply`,
      '',
      '--',
      `You get this as a member or follower of this conversation on ${team}.`,
      `No more mail about this conversation: ${links.muteUrl}`,
      `No more mail from ${team} at all: ${links.muteAllUrl}`,
      `Your mail settings: ${links.settingsUrl}`,
      '',
    ].join('\n'),
    headers: {
      'List-Unsubscribe': `<${links.muteUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}

/** The site's addresses behind a mail's links. */
export const unsubscribeUrl = (account: SiteAccount, token: string): string => `${account.host}/unsubscribe/${token}`;
export const mailSettingsUrl = (account: SiteAccount): string => `${account.host}/settings`;

/**
 * One round of the notification worker: posted messages become pending mails, and the due ones
 * are queued as mail. Returns whether it found anything to do.
 */
export async function sendNotifications(
  store: NotificationStore,
  secrets: SiteSecrets,
  options: {
    batchSeconds: number;
    limit?: number;
    /** The mail's HTML part (the pages' view of it); without it, the sender's escaped text. */
    html?: (digest: DueDigest, links: NotificationLinks) => string;
  },
): Promise<boolean> {
  const limit = options.limit ?? 50;
  const fannedOut = await store.fanOut(limit * 4, options.batchSeconds);
  // Read before the mails are taken: inside takeDue's transaction only its outbox may be used.
  const key = await secrets.signingKey();
  const sent = await store.takeDue(limit, async (digest, outbox) => {
    const target = { accountId: digest.account.id, userId: digest.recipient.id };
    const links = {
      muteUrl: unsubscribeUrl(
        digest.account,
        await muteToken(key, { ...target, conversationId: digest.conversation.id }),
      ),
      muteAllUrl: unsubscribeUrl(digest.account, await muteToken(key, { ...target, conversationId: 0 })),
      settingsUrl: mailSettingsUrl(digest.account),
    };
    const mail = notificationMail(digest, links);
    await outbox.enqueue(digest.account.id, options.html ? { ...mail, html: options.html(digest, links) } : mail);
  });
  return fannedOut > 0 || sent > 0;
}
