import type { SiteStore } from '../conversations/ports.ts';
import { type ReplyRecording, sendReply } from '../conversations/send-reply.ts';
import { type MediaDeps, MediaTooLarge, MediaUnavailable, newMediaKey } from '../media/media.ts';
import type { Uploads } from '../media/uploads.ts';
import type { LinkOptions, PeopleDeps } from '../people/people.ts';
import type { VisitorLimits } from '../people/ports.ts';
import type { SiteAccount, TeamRole } from '../records.ts';
import { normalAddress, replyTokenHash, replyTokenOf } from '../shared/reply-address.ts';
import { conversationUrl } from '../shared/urls.ts';

/*
 * Reply by e-mail (issue 44): a mail that came back to a notification's reply address becomes a
 * reply by the person the address was issued to, through the page's own use case (sendReply), so
 * membership, moderation, limits, notifications, webhooks, workflows and live updates are those of
 * any reply. Every receiver (the SMTP listener, the HTTP relay endpoint, IMAP polling) parses the
 * mail, trims its quote and hands it here.
 */

/** A mail as a receiver read it: addresses, the headers that say what kind of mail it is, its words. */
export interface InboundReply {
  /** Where it was sent: the envelope's recipients (else To and Cc). */
  recipients: readonly string[];
  /** The From address (the envelope's sender is not the person). */
  from: string | null;
  /** Its Message-ID, without angle brackets. */
  messageId: string | null;
  /** In-Reply-To and References, without angle brackets. */
  references: readonly string[];
  /** Why it is a mail no person wrote (an auto-reply, a bounce, a loop), as automaticReason says; else null. */
  automatic: string | null;
  /** Its words, trimmed of the quote and signature (the receiver's reply parser and aboveMarker). */
  text: string;
  /** Its attachments: one audio or video file becomes the reply's recording; any other is refused. */
  attachments: readonly MailAttachment[];
  /** Why its sender's domain disowns it (SPF, DKIM, DMARC, where the operator checks them); else null. */
  authentication: string | null;
}

export interface MailAttachment {
  name: string;
  /** Its Content-Type, as the mail says. */
  type: string;
  content: Uint8Array;
}

/** An attachment that may be a recording (a voice memo, a phone's video); the probe decides if it is one. */
const isRecording = (a: MailAttachment) => /^(audio|video)\//i.test(a.type);

/** A reply address found, with what posting as its person needs. */
export interface KnownReplyAddress {
  id: number;
  account: SiteAccount;
  userId: number;
  email: string;
  teamRole: TeamRole | null;
  conversationId: number;
  slug: string;
  /** The thread's first message, when the address was for one thread. */
  parentId: number | null;
  /** Past its lifetime. */
  expired: boolean;
}

export interface ReplyAddressStore {
  /** The address a token's hash names (its person still there); null for none. */
  byToken(tokenHash: string): Promise<KnownReplyAddress | null>;
  /** The address whose mail one of these Message-IDs was, issued to `from`; null for none. */
  byMessageIds(messageIds: readonly string[], from: string): Promise<KnownReplyAddress | null>;
  /**
   * Takes a mail in for an address (by its key), counting a use: 'new' the first time, 'seen' for
   * the same mail again, 'used_up' when the address has taken all its replies.
   */
  receive(address: KnownReplyAddress, messageKey: string, maxUses: number): Promise<'new' | 'seen' | 'used_up'>;
  /** What came of a mail taken in; 'later' forgets it, so the same mail is taken in again. */
  settle(address: KnownReplyAddress, messageKey: string, outcome: ReceivedOutcome['kind']): Promise<void>;
  /** Marks a bounce sent for the address: false when one went within the hour (then none goes). */
  bounced(address: KnownReplyAddress): Promise<boolean>;
}

export type ReceivedOutcome =
  /** No reply address of ours: refused (an SMTP receiver refuses it at RCPT TO). */
  | { kind: 'unknown' }
  /**
   * Not acted on, and no mail sent about it: an automatic mail, one seen before, or a stranger's
   * (which a receiver refuses, so the sender's own server says so; the others it takes and forgets).
   */
  | { kind: 'dropped'; why: 'automatic' | 'seen' | 'stranger' | 'unauthenticated'; reason: string }
  | { kind: 'posted'; messageId: number; slug: string }
  /** Not posted: the person was told why by mail (unless they were within the hour). */
  | { kind: 'bounced'; reason: string }
  /** Not taken in now (the server is busy): the sender should try again later; nothing was kept. */
  | { kind: 'later'; reason: string }
  /** Past a limit (the person's or the account's mail an hour): try again in `retrySeconds`; nothing was kept. */
  | { kind: 'limited'; reason: string; retrySeconds: number };

export interface ReceiveDeps extends PeopleDeps {
  site: SiteStore;
  media: MediaDeps;
  uploads: Uploads;
  replyAddresses: ReplyAddressStore;
  /** The per-person and per-account limits of mail taken in (the sites' limiter). */
  visitorLimits: VisitorLimits;
  /** How the account's sign-in links are made (sendReply's; a known person never needs one). */
  link(account: SiteAccount): LinkOptions;
}

export interface ReceiveOptions {
  /** The domain reply addresses are on (INBOUND_MAIL_DOMAIN). */
  domain: string;
  /** Replies one address takes. */
  maxUses: number;
  /** Mails taken in from one person an hour, and for one account (0: no limit). */
  perPersonPerHour: number;
  perAccountPerHour: number;
}

/** The headers that mark a mail no person wrote (RFC 3834, the common auto-responders', bounces'). */
export function automaticReason(header: (name: string) => string | null, envelopeFrom: string | null): string | null {
  const submitted = header('auto-submitted')?.trim().toLowerCase();
  if (submitted && submitted !== 'no') return `Auto-Submitted: ${submitted}`;
  if (header('x-autoreply') !== null || header('x-autorespond') !== null) return 'an auto-reply';
  const precedence = header('precedence')?.trim().toLowerCase();
  if (precedence && ['bulk', 'junk', 'list', 'auto_reply'].includes(precedence)) return `Precedence: ${precedence}`;
  if (header('x-loop') !== null) return 'a mail loop (X-Loop)';
  if (/multipart\/report/i.test(header('content-type') ?? '')) return 'a delivery report';
  if (envelopeFrom === '') return 'a bounce (no sender)';
  return null;
}

/**
 * Posts a reply mail as the person its address names, or says why not: nothing is posted for a
 * mail no person wrote (dropped, never answered: no reply storm), from anyone but the address's
 * person (dropped: a stranger is not mailed), or seen before (the same mail once, on every replica).
 * A mail that cannot be posted otherwise (the address expired or used up, the conversation gone
 * or closed to them, an empty or refused reply) is answered with one polite mail saying why.
 */
export async function receiveReplyMail(
  deps: ReceiveDeps,
  mail: InboundReply,
  options: ReceiveOptions,
): Promise<ReceivedOutcome> {
  const token = mail.recipients.map((r) => replyTokenOf(r, options.domain)).find((t) => t !== null) ?? null;
  const from = mail.from ? normalAddress(mail.from) : null;
  const address = token
    ? await deps.replyAddresses.byToken(await replyTokenHash(token))
    : from && mail.references.length > 0
      ? await deps.replyAddresses.byMessageIds(mail.references, from)
      : null;
  if (!address) return { kind: 'unknown' };
  if (mail.automatic) return { kind: 'dropped', why: 'automatic', reason: `not a person's reply (${mail.automatic})` };
  if (from !== normalAddress(address.email)) {
    return { kind: 'dropped', why: 'stranger', reason: 'it is not from the address this reply address was sent to' };
  }
  if (mail.authentication) {
    return { kind: 'dropped', why: 'unauthenticated', reason: `its sender is not proven: ${mail.authentication}` };
  }
  // A flood (a script, a loop between two servers) is slowed before anything is written.
  for (const [key, limit] of [
    [`mail:person:${address.userId}`, options.perPersonPerHour],
    [`mail:account:${address.account.id}`, options.perAccountPerHour],
  ] as const) {
    if (limit === 0) continue;
    const taken = await deps.visitorLimits.take(key, limit, 3600);
    if (!taken.allowed) {
      return { kind: 'limited', reason: 'too many mails were taken in just now', retrySeconds: taken.resetSeconds };
    }
  }
  const messageKey = await replyTokenHash(mail.messageId ? `id:${mail.messageId}` : `text:${mail.text}`);
  const taken = await deps.replyAddresses.receive(address, messageKey, options.maxUses);
  if (taken === 'seen') return { kind: 'dropped', why: 'seen', reason: 'the same mail was taken in before' };

  const bounce = async (reason: string): Promise<ReceivedOutcome> => {
    await deps.replyAddresses.settle(address, messageKey, 'bounced');
    if (await deps.replyAddresses.bounced(address)) {
      const url = conversationUrl(address.account, address.slug);
      await deps.outbox.enqueue(address.account.id, {
        to: address.email,
        subject: `Your reply could not be posted on ${address.account.name}`,
        text: [
          'Hello,',
          '',
          `Your mail could not be posted as a reply: ${reason}`,
          '',
          `You can answer on the page: ${url}#reply`,
          '',
          '--',
          `${address.account.name} (this mail answers yours; answering it does nothing)`,
          '',
        ].join('\n'),
        headers: { 'Auto-Submitted': 'auto-replied' },
      });
    }
    return { kind: 'bounced', reason };
  };
  if (taken === 'used_up') return bounce('its reply address has taken all the replies it may.');
  if (address.expired) return bounce('its reply address has expired. Answer a newer mail, or on the page.');
  const recordings = mail.attachments.filter(isRecording);
  const others = mail.attachments.filter((a) => !isRecording(a));
  if (others.length > 0 || recordings.length > 1) {
    return bounce(
      `it carried ${others.length > 0 ? `files that are not a recording (${others.map((a) => a.name).join(', ')})` : 'more than one recording'}. A reply may carry one audio or video recording, and no other file.`,
    );
  }
  const text = mail.text.trim();
  if (text === '' && recordings.length === 0) {
    return bounce('nothing was left once the quoted mail was taken out. Write your answer above the quoted part.');
  }
  // The recording, kept as the page keeps an uploaded one; sendReply measures it, and keeps it
  // with the message it becomes or removes it.
  let recording: ReplyRecording = { kind: 'none' };
  const [memo] = recordings;
  if (memo) {
    const key = newMediaKey(address.account.id);
    try {
      const { bytes } = await deps.media.store.put(key, [memo.content], deps.media.limits.maxBytes);
      recording = { kind: 'file', file: { key, bytes } };
    } catch (err) {
      if (err instanceof MediaTooLarge) {
        return bounce(`its recording is over ${Math.floor(deps.media.limits.maxBytes / 1_048_576)} MB.`);
      }
      if (!(err instanceof MediaUnavailable)) throw err;
      await deps.replyAddresses.settle(address, messageKey, 'later');
      return { kind: 'later', reason: err.message };
    }
  }
  const outcome = await sendReply(
    deps,
    address.account,
    address.slug,
    { userId: address.userId, teamRole: address.teamRole },
    { text, parentId: address.parentId ?? undefined, submitKey: `mail-${messageKey.slice(0, 40)}` },
    recording,
    { link: deps.link(address.account), granted: null, sender: `mail:${address.userId}` },
  );
  switch (outcome.kind) {
    case 'posted':
      await deps.replyAddresses.settle(address, messageKey, 'posted');
      return { kind: 'posted', messageId: outcome.messageId, slug: outcome.slug };
    case 'not_found':
      return bounce('the conversation is gone, or you can no longer reply in it.');
    case 'refused':
      return bounce(outcome.problem);
    case 'busy':
    case 'unavailable':
      // Nothing the person did: the receiver asks the sender to try again (SMTP 451), and the
      // same mail is then taken in as new.
      await deps.replyAddresses.settle(address, messageKey, 'later');
      return { kind: 'later', reason: outcome.problem };
    case 'check_email':
      // A known person never waits for a link; here for completeness of the outcomes.
      return bounce('the reply needs a confirmation this mail cannot give.');
  }
}
