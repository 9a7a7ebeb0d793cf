import type { SiteAccount } from '../records.ts';
import type { MailOutbox } from '../shared/mail.ts';
import { textProblem } from '../shared/text.ts';
import type { PeopleStore, ReplyStore, SignInLinkRecord } from './ports.ts';

/*
 * The rules for people on an account's site: what a reply must be, where a sign-in may lead back
 * to, and the sign-in link every way in mails (a name and an address: shared/person.ts).
 */

export const REPLY_MAX_LENGTH = 10_000;

/** A reply's text as it is stored: line breaks as `\n` (browsers send `\r\n`), trimmed. */
export const replyText = (text: string): string => text.replace(/\r\n?/g, '\n').trim();

/**
 * Why a reply's text (or, `what: 'message'`, the message that starts a conversation) cannot be
 * posted, or null. Counted in characters after trimming.
 */
export function replyProblem(text: string, what: 'reply' | 'message' = 'reply'): string | null {
  const trimmed = text.trim();
  if (trimmed.length === 0) {
    return what === 'reply' ? 'Write a reply before posting it.' : 'Write a message, or send a recording.';
  }
  if (Array.from(trimmed).length > REPLY_MAX_LENGTH) return `A ${what} is at most ${REPLY_MAX_LENGTH} characters.`;
  return textProblem(what === 'reply' ? 'The reply' : 'The message', trimmed);
}

/** Where a sign-in may send someone back to: a page of the same site, never another host. */
export function returnPath(path: string | null | undefined): string {
  return path && (/^\/c\/[A-Za-z0-9_-]{1,100}$/.test(path) || path === '/settings') ? path : '/';
}

export interface PeopleDeps {
  people: PeopleStore;
  replies: ReplyStore;
  outbox: MailOutbox;
}

export interface LinkOptions {
  /** The address of the sign-in link for a token. */
  signInUrl(token: string): string;
  ttlSeconds: number;
  newToken(): string;
}

/**
 * A link mailed to an address: the same statements and the same mail whoever owns the address
 * (the link says whose it is only to the person who opens it). Nobody has confirmed the address,
 * so the mail carries nothing a visitor wrote or chose (a stranger's words and links would go out
 * under the account's name): the page the link opens shows the reply it would post, before it is
 * confirmed, so nobody confirms a text they did not write.
 */
export async function sendSignInLink(
  deps: Pick<PeopleDeps, 'people' | 'outbox'>,
  account: SiteAccount,
  link: LinkOptions,
  made: SignInLinkRecord,
): Promise<void> {
  const token = link.newToken();
  await deps.people.createSignInLink(account.id, token, { ...made, ttlSeconds: link.ttlSeconds });
  const minutes = Math.round(link.ttlSeconds / 60);
  const url = link.signInUrl(token);
  const lines = made.pending
    ? [
        `Someone asked to post a reply${
          made.pending.media ? ` with a ${made.pending.media.kind} recording of ${made.pending.media.seconds} s` : ''
        } on ${account.name} with this e-mail address.`,
        '',
        'If it was you, open this link: it shows the reply, and confirming posts it under your name and signs you in.',
        '',
        url,
      ]
    : [`Open this link and confirm to sign in to ${account.name}:`, '', url];
  await deps.outbox.enqueue(account.id, {
    to: made.email,
    subject: made.pending ? `Confirm your reply on ${account.name}` : `Sign in to ${account.name}`,
    text: [
      ...lines,
      '',
      `It works once, for ${minutes} minutes. If you did not ask for it, ignore this e-mail: nothing is posted and nobody is signed in.`,
      '',
    ].join('\n'),
  });
}
