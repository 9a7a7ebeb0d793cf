import type { MailOutbox, OutgoingMail } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { intArray, query } from './sql.ts';

/** A mail a worker took: it holds the lease until next_attempt_at. */
export interface ClaimedMail {
  id: number;
  recipient: string;
  subject: string;
  body: string;
  html: string | null;
  headers: Record<string, string> | null;
}

/** Attempts before a mail is given up (about four hours of backoff in all). */
export const MAIL_MAX_ATTEMPTS = 8;

export class PgMailOutbox implements MailOutbox {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async enqueue(accountId: number, mail: OutgoingMail): Promise<void> {
    const grant = mail.replyAddress;
    if (grant) {
      // Kept with the mail, in its transaction: an address is good once its mail is queued.
      await query(
        this.em,
        `insert into reply_address (account_id, user_id, conversation_id, parent_id, token_hash, message_id, expires_at)
         values (?, ?, ?, ?, ?, ?, now() + make_interval(days => ?))`,
        [accountId, grant.userId, grant.conversationId, grant.parentId, grant.tokenHash, grant.messageId, grant.days],
      );
    }
    await query(
      this.em,
      'insert into outgoing_mail (account_id, recipient, subject, body, html, headers) values (?, ?, ?, ?, ?, ?::jsonb)',
      [
        accountId,
        mail.to,
        mail.subject.slice(0, 255),
        mail.text,
        mail.html ?? null,
        mail.headers ? JSON.stringify(mail.headers) : null,
      ],
    );
  }

  /**
   * Takes up to `limit` due mails for this worker, the longest due first (off the `outgoing_mail_due`
   * index, however long the queue). A taken mail's next attempt moves out (1, 2, 4 …
   * minutes), which is its lease: a worker that dies mid-send leaves it to be taken again then, so
   * a mail is sent at least once. SKIP LOCKED keeps two workers off the same rows.
   */
  async claimDue(limit: number): Promise<ClaimedMail[]> {
    return query<ClaimedMail>(
      this.em,
      `update outgoing_mail set attempts = attempts + 1,
         next_attempt_at = now() + make_interval(mins => least(power(2, attempts)::int, 60))
       where id in (
         select id from outgoing_mail
         where sent_at is null and next_attempt_at <= now() and attempts < ?
         order by next_attempt_at, id limit ? for update skip locked)
       returning id, recipient, subject, body, html, headers`,
      [MAIL_MAX_ATTEMPTS, limit],
    );
  }

  /**
   * Sent, each of `ids`: they leave the queue, in one statement. Nothing of a sent mail is kept (its
   * body may hold a sign-in link, its recipient is someone's address), and the queue stays as small
   * as what is still to send, for its claim and for the vacuum that follows it.
   */
  async sent(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await query(this.em, 'delete from outgoing_mail where id = any(?::int[])', [intArray(ids)]);
  }

  async failed(id: number, error: string): Promise<void> {
    await query(this.em, 'update outgoing_mail set last_error = ? where id = ?', [error.slice(0, 1000), id]);
  }
}
