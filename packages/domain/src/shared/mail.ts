/*
 * The mail outbox, the one port every area that writes to people shares (sign-in links,
 * notifications, workflow mail).
 */

/** A mail as the domain writes it: plain text (the sender adds an escaped HTML part). */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  /** Headers beside From, To and Subject, such as List-Unsubscribe (values on one line). */
  headers?: Record<string, string> | undefined;
}

/** Mail is queued in the database and sent by a worker, so a request never waits for SMTP. */
export interface MailOutbox {
  enqueue(accountId: number, mail: OutgoingMail): Promise<void>;
}
