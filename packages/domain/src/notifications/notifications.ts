import { type ComeBackWrites, mailComeBack, type UnconfirmedStart } from '../people/come-back.ts';
import type { LinkOptions } from '../people/people.ts';
import type { SiteAccount, TeamRole } from '../records.ts';
import type { MailOutbox, OutgoingMail } from '../shared/mail.ts';
import { issueReplyAddress, REPLY_ABOVE_MARKER } from '../shared/reply-address.ts';
import type { SiteSecrets } from '../shared/secrets.ts';
import { formatNiceTime } from '../shared/time.ts';
import { conversationUrl, messageReadUrl } from '../shared/urls.ts';

/*
 * Telling people that someone answered, or played their recording. Who is told: the conversation's members and followers
 * (followers only while it is public), but the author, and nobody who muted it or all of the
 * account's mail (the store's fan-out holds that rule in SQL). When: one mail per person and
 * conversation per batch window, carrying every message since the first one it waited for. How to
 * stop: a signed link in each mail (RFC 8058 one-click for the conversation, and one for all of the
 * account's mail), which needs no sign-in.
 *
 * Plays ride the same mail: a counted play of a message tells its author (never anyone else), in
 * the digest that person and conversation have pending, unless they stopped play notices for the
 * conversation or for all of the account's (or all its mail, or the conversation's). Reactions
 * ride it too, to the reacted message's author, stopped with the conversation's mail.
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

/** A counted play of the recipient's own message. */
export interface DigestPlay {
  /** The viewer's name; null for a visitor who was not signed in. */
  viewerName: string | null;
  messageId: number;
  messageType: string;
  /** The played message's caption (its words; may be empty). */
  text: string;
  playedAt: bigint;
  /** The played message's thread (its first message); null for a message of the conversation itself. */
  parentId: number | null;
}

/** A reaction on the recipient's own message. */
export interface DigestReaction {
  /** Who reacted; null for a visitor who was not signed in. */
  reactorName: string | null;
  /** The reaction's emoji ("👍"). */
  emoji: string;
  messageId: number;
  /** The message's words (may be empty). */
  text: string;
  createdAt: bigint;
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
  /** Plays of the recipient's messages since the mail began, oldest first, at most NOTIFY_MAX_MESSAGES. */
  plays: DigestPlay[];
  /** How many plays in all. */
  totalPlays: number;
  /** Reactions on the recipient's messages since the mail began (still there), oldest first, at most NOTIFY_MAX_MESSAGES. */
  reactions: DigestReaction[];
  /** How many reactions in all. */
  totalReactions: number;
}

/** What a mute stops: all of the mail ('all'), or only the notices of plays ('plays'). */
export type MuteKind = 'all' | 'plays';

export interface NotificationStore {
  /**
   * Turns up to `limit` posted messages into pending mails (one per person and conversation), due
   * `batchSeconds` after their first message; hands each start under an address nobody confirmed
   * to `comeBack`, with the sign-in links and the outbox of the same transaction.
   */
  fanOut(
    limit: number,
    batchSeconds: number,
    comeBack: (start: UnconfirmedStart, writes: ComeBackWrites) => Promise<void>,
  ): Promise<number>;
  /**
   * Takes up to `limit` due mails, each handed to `send` with an outbox in the same transaction:
   * a taken mail is queued or, if anything fails, left to be taken again.
   */
  takeDue(limit: number, send: (digest: DueDigest, outbox: MailOutbox) => Promise<void>): Promise<number>;
  /** No more mail (or only play notices) about one conversation (or, null, about any of the account's) for this person. */
  mute(accountId: number, userId: number, conversationId: number | null, kind: MuteKind): Promise<void>;
  unmute(accountId: number, userId: number, conversationId: number | null, kind: MuteKind): Promise<void>;
  follow(accountId: number, userId: number, conversationId: number): Promise<void>;
  unfollow(accountId: number, userId: number, conversationId: number): Promise<void>;
  /** What this person gets of a conversation's mail, and of the account's. */
  mailState(
    accountId: number,
    userId: number,
    conversationId: number,
  ): Promise<{
    member: boolean;
    following: boolean;
    muted: boolean;
    mutedAll: boolean;
    /** Play notices stopped for this conversation, and for all of the account's. */
    playsMuted: boolean;
    playsMutedAll: boolean;
  }>;
}

// ---- Signed links ----------------------------------------------------------------------------

/** What a signed link stops: one conversation's mail, or (conversation 0) all of the account's; all of it or the play notices. */
export interface MuteTarget {
  accountId: number;
  userId: number;
  /** 0: every conversation of the account. */
  conversationId: number;
  kind: MuteKind;
}

const encoder = new TextEncoder();

const base64url = (bytes: ArrayBuffer): string =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

/**
 * The site's key as WebCrypto holds it, imported when first used and again only when the key
 * changes: a mail signs four links, and importing the key for each was a third of their cost.
 */
let imported: { key: string; hmac: ReturnType<typeof crypto.subtle.importKey> } | null = null;

async function signature(key: string, payload: string): Promise<string> {
  if (imported?.key !== key) {
    imported = {
      key,
      hmac: crypto.subtle.importKey('raw', encoder.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
    };
  }
  return base64url(await crypto.subtle.sign('HMAC', await imported.hmac, encoder.encode(`mute:${payload}`)));
}

// A link of all the mail reads as it did before play notices existed, so mailed links stay good.
const payloadOf = (t: MuteTarget) => `${t.accountId}.${t.userId}.${t.conversationId}${t.kind === 'plays' ? '.p' : ''}`;

/** The token of an unsubscribe link: what it stops, and its HMAC-SHA256 under the site's key. */
export async function muteToken(key: string, target: MuteTarget): Promise<string> {
  return `${payloadOf(target)}.${await signature(key, payloadOf(target))}`;
}

/** What a token stops, when its signature holds; null for anything else. */
export async function readMuteToken(key: string, token: string): Promise<MuteTarget | null> {
  const parsed = /^(\d{1,10})\.(\d{1,10})\.(\d{1,10})(\.p)?\.([\w-]{43})$/.exec(token);
  if (!parsed) return null;
  const target: MuteTarget = {
    accountId: Number(parsed[1]),
    userId: Number(parsed[2]),
    conversationId: Number(parsed[3]),
    kind: parsed[4] ? 'plays' : 'all',
  };
  const expected = await signature(key, payloadOf(target));
  // Compared as HMACs of their own, so the time taken says nothing about how much of it matched.
  const [a, b] = await Promise.all([signature(key, expected), signature(key, parsed[5] as string)]);
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

/** Where a notification's links lead: stop this conversation's mail, all of it, its play notices, all play notices, the settings. */
export interface NotificationLinks {
  muteUrl: string;
  muteAllUrl: string;
  mutePlaysUrl: string;
  mutePlaysAllUrl: string;
  settingsUrl: string;
}

/** How a mail names a play's viewer. */
const viewerName = (p: DigestPlay) => p.viewerName ?? 'A visitor';

/** One play as a mail tells it: "Pat played your video recording". */
export const mailPlayLine = (p: DigestPlay) =>
  `${viewerName(p)} played your ${mailRecordingName(p.messageType).replace(/^an? /, '')}`;

/** A caption as a play's line quotes it: short, since the author wrote it. */
export const playExcerpt = (text: string): string => {
  const chars = Array.from(text.trim().replace(/\s+/g, ' '));
  return chars.length <= 80 ? chars.join('') : `${chars.slice(0, 79).join('')}…`;
};

/** One reaction as a mail tells it: "Pat reacted 👍 to your message". */
export const mailReactionLine = (r: DigestReaction) =>
  `${r.reactorName ?? 'A visitor'} reacted ${r.emoji} to your message`;

/** The unsubscribe a mail client offers (RFC 8058): of this conversation's mail, or of its play notices when that is all the mail tells. */
const listUnsubscribe = (d: DueDigest, links: NotificationLinks) =>
  d.total === 0 && d.totalPlays > 0 && d.totalReactions === 0 ? links.mutePlaysUrl : links.muteUrl;

/** What a notification says above its messages ("New conversation from …", how many are new, who played what). */
export function notificationHeading(d: DueDigest): { subject: string; lead: string } {
  const team = d.account.name;
  const first = d.messages[0];
  const play = d.plays[0];
  const reaction = d.reactions[0];
  if (d.total === 0 && d.totalPlays === 0 && reaction) {
    const subject =
      d.totalReactions === 1
        ? `${mailReactionLine(reaction)} in "${d.conversation.title}"`
        : `${d.totalReactions} reactions to your messages in "${d.conversation.title}"`;
    return { subject: `${subject} on ${team}`, lead: `${subject} on ${team}:` };
  }
  if (d.total === 0 && play) {
    const subject =
      d.totalPlays === 1
        ? `${viewerName(play)} played your message in "${d.conversation.title}"`
        : `${d.totalPlays} plays of your messages in "${d.conversation.title}"`;
    return { subject: `${subject} on ${team}`, lead: `${subject} on ${team}:` };
  }
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

/** The address a notification may be answered at (reply by e-mail), and the Message-ID that goes with it. */
export interface MailReply {
  address: string;
  messageId: string;
}

/**
 * The mail of a due digest: who wrote, what (quoted), where; and the two ways to stop. With
 * `reply`, it may be answered by mail: its Reply-To names the address, and a marker line above the
 * text tells where the answer ends.
 */
export function notificationMail(d: DueDigest, links: NotificationLinks, reply?: MailReply): OutgoingMail {
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
  const plays = d.plays.map((p) =>
    [
      `${mailPlayLine(p)}, ${formatNiceTime(p.playedAt)}:`,
      ...(p.text.trim() === '' ? [] : [quoted(playExcerpt(p.text))]),
      messageReadUrl(url, { id: p.messageId, parentId: p.parentId }),
    ].join('\n'),
  );
  const playsLeft = d.totalPlays - d.plays.length;
  const reactions = d.reactions.map((r) =>
    [
      `${mailReactionLine(r)}, ${formatNiceTime(r.createdAt)}:`,
      ...(r.text.trim() === '' ? [] : [quoted(playExcerpt(r.text))]),
      messageReadUrl(url, { id: r.messageId, parentId: r.parentId }),
    ].join('\n'),
  );
  const reactionsLeft = d.totalReactions - d.reactions.length;
  return {
    to: d.recipient.email,
    subject: heading.subject,
    text: [
      ...(reply ? [REPLY_ABOVE_MARKER, ''] : []),
      heading.lead,
      ...(parts.length > 0 ? ['', parts.join('\n\n')] : []),
      ...(left > 0 ? ['', `…and ${left} more on the page.`] : []),
      ...(plays.length > 0 && d.total > 0 ? ['', 'Played since:'] : []),
      ...(plays.length > 0 ? ['', plays.join('\n\n')] : []),
      ...(playsLeft > 0 ? ['', `…and ${playsLeft} more plays.`] : []),
      ...(reactions.length > 0 && d.total + d.totalPlays > 0 ? ['', 'Reactions since:'] : []),
      ...(reactions.length > 0 ? ['', reactions.join('\n\n')] : []),
      ...(reactionsLeft > 0 ? ['', `…and ${reactionsLeft} more reactions.`] : []),
      '',
      reply ? `Answer this mail, or on the page: ${url}#reply` : `Answer on the page: ${url}#reply`,
      '',
      '--',
      `You get this as a member or follower of this conversation on ${team}.`,
      `No more mail about this conversation: ${links.muteUrl}`,
      `No more mail from ${team} at all: ${links.muteAllUrl}`,
      ...(d.totalPlays > 0
        ? [
            `No more play notices about this conversation: ${links.mutePlaysUrl}`,
            `No more play notices at all: ${links.mutePlaysAllUrl}`,
          ]
        : []),
      `Your mail settings: ${links.settingsUrl}`,
      '',
    ].join('\n'),
    headers: {
      'List-Unsubscribe': `<${listUnsubscribe(d, links)}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      ...(reply ? { 'Reply-To': reply.address, 'Message-ID': `<${reply.messageId}>` } : {}),
    },
  };
}

/** The thread a digest is about alone (every message of it in one thread), else null: the conversation. */
const digestThread = (d: DueDigest): number | null => {
  const threads = new Set([...d.messages, ...d.plays, ...d.reactions].map((m) => m.parentId));
  const [only] = threads;
  return threads.size === 1 && only !== undefined ? only : null;
};

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
    html?: (digest: DueDigest, links: NotificationLinks, reply?: MailReply) => string;
    /** Mail may be answered at reply addresses on this domain (INBOUND_MAIL_DOMAIN), good for `days`. */
    replies?: { domain: string; days: number } | undefined;
    /** How an account's sign-in links are made: a visitor's link back after an intake start. */
    links: (account: SiteAccount) => LinkOptions;
  },
): Promise<boolean> {
  const limit = options.limit ?? 50;
  const fannedOut = await store.fanOut(limit * 4, options.batchSeconds, (start, writes) =>
    mailComeBack(writes, options.links(start.account), start),
  );
  // Read before the mails are taken: inside takeDue's transaction only its outbox may be used.
  const key = await secrets.signingKey();
  // A round mails one person about many conversations: the links that stop all of it are the same
  // in each of their mails, and signed once.
  const tokens = new Map<string, Promise<string>>();
  const token = (target: MuteTarget) => {
    const payload = payloadOf(target);
    const made = tokens.get(payload) ?? muteToken(key, target);
    tokens.set(payload, made);
    return made;
  };
  const sent = await store.takeDue(limit, async (digest, outbox) => {
    const target = { accountId: digest.account.id, userId: digest.recipient.id };
    const link = async (conversationId: number, kind: MuteKind) =>
      unsubscribeUrl(digest.account, await token({ ...target, conversationId, kind }));
    const links = {
      muteUrl: await link(digest.conversation.id, 'all'),
      muteAllUrl: await link(0, 'all'),
      mutePlaysUrl: await link(digest.conversation.id, 'plays'),
      mutePlaysAllUrl: await link(0, 'plays'),
      settingsUrl: mailSettingsUrl(digest.account),
    };
    const issued = options.replies
      ? await issueReplyAddress(
          options.replies.domain,
          { userId: digest.recipient.id, conversationId: digest.conversation.id, parentId: digestThread(digest) },
          options.replies.days,
        )
      : null;
    const reply = issued ? { address: issued.address, messageId: issued.messageId } : undefined;
    const mail = { ...notificationMail(digest, links, reply), replyAddress: issued?.grant };
    await outbox.enqueue(
      digest.account.id,
      options.html ? { ...mail, html: options.html(digest, links, reply) } : mail,
    );
  });
  return fannedOut > 0 || sent > 0;
}
