import type { ReplyAddressGrant } from './reply-address.ts';

/*
 * The mail outbox, the one port every area that writes to people shares (sign-in links,
 * notifications, workflow mail).
 */

/**
 * A mail as the domain writes it: plain text, and the HTML part a mail may carry (rendered by the
 * pages' views; else the sender makes one of the text, escaped).
 */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
  /** Headers beside From, To and Subject, such as List-Unsubscribe (values on one line). */
  headers?: Record<string, string> | undefined;
  /** The reply address its `Reply-To` names, kept with the mail in the same transaction. */
  replyAddress?: ReplyAddressGrant | undefined;
}

/** Mail is queued in the database and sent by a worker, so a request never waits for SMTP. */
export interface MailOutbox {
  enqueue(accountId: number, mail: OutgoingMail): Promise<void>;
}
