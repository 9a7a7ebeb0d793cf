import { type MailOutbox, type OutgoingMail, toWellFormed } from '@convo/domain';
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

/** A mail to queue, and the account it is sent for. */
interface Queued {
  accountId: number;
  mail: OutgoingMail;
}

/**
 * Queues `mails` in at most two statements however many they are: the reply addresses their
 * `Reply-To` names (kept in the same transaction: an address is good once its mail is queued),
 * then the mails.
 */
async function enqueueAll(em: EntityManager, mails: readonly Queued[]): Promise<void> {
  const json = (rows: object[]) =>
    JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'string' ? toWellFormed(value) : value));
  const grants = mails.flatMap(({ accountId, mail }) => {
    const g = mail.replyAddress;
    if (!g) return [];
    const { userId, conversationId, parentId, tokenHash, messageId, days } = g;
    return [{ accountId, userId, conversationId, parentId, tokenHash, messageId, days }];
  });
  if (grants.length > 0) {
    await query(
      em,
      `insert into reply_address (account_id, user_id, conversation_id, parent_id, token_hash, message_id, expires_at)
       select "accountId", "userId", "conversationId", "parentId", "tokenHash", "messageId", now() + make_interval(days => days)
       from jsonb_to_recordset(?::jsonb) as g("accountId" int, "userId" int, "conversationId" int, "parentId" int,
         "tokenHash" varchar, "messageId" varchar, days int)`,
      [json(grants)],
    );
  }
  const rows = mails.map(({ accountId, mail }) => ({
    accountId,
    to: mail.to,
    subject: mail.subject.slice(0, 255),
    text: mail.text,
    html: mail.html ?? null,
    headers: mail.headers ?? null,
  }));
  await query(
    em,
    `insert into outgoing_mail (account_id, recipient, subject, body, html, headers)
     select "accountId", "to", subject, text, html, headers
     from jsonb_to_recordset(?::jsonb) as m("accountId" int, "to" varchar, subject varchar, text text, html text, headers jsonb)`,
    [json(rows)],
  );
}

/**
 * Mails a worker makes many of in one transaction (the notifications): kept by `enqueue` and
 * written together by `write`, two statements for the lot instead of one or two a mail.
 */
export class MailBatch implements MailOutbox {
  private readonly mails: Queued[] = [];

  enqueue(accountId: number, mail: OutgoingMail): Promise<void> {
    this.mails.push({ accountId, mail });
    return Promise.resolve();
  }

  /** Writes what was queued (nothing, when nothing was) in `em`'s transaction. */
  async write(em: EntityManager): Promise<void> {
    if (this.mails.length > 0) await enqueueAll(em, this.mails.splice(0));
  }
}

/** Takes due mails tried fewer times than the first parameter, at most the second's: see PgMailOutbox.claimDue. */
export const CLAIM_DUE_MAIL = `update outgoing_mail set attempts = attempts + 1,
    next_attempt_at = now() + make_interval(mins => least(power(2, attempts)::int, 60))
  where id in (
    select id from outgoing_mail
    where sent_at is null and next_attempt_at <= now() and attempts < ?
    order by next_attempt_at, id limit ? for update skip locked)
  returning id, recipient, subject, body, html, headers`;

export class PgMailOutbox implements MailOutbox {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async enqueue(accountId: number, mail: OutgoingMail): Promise<void> {
    await enqueueAll(this.em, [{ accountId, mail }]);
  }

  /**
   * Takes up to `limit` due mails for this worker, the longest due first (off the `outgoing_mail_due`
   * index, however long the queue). A taken mail's next attempt moves out (1, 2, 4 …
   * minutes), which is its lease: a worker that dies mid-send leaves it to be taken again then, so
   * a mail is sent at least once. SKIP LOCKED keeps two workers off the same rows.
   */
  async claimDue(limit: number): Promise<ClaimedMail[]> {
    return query<ClaimedMail>(this.em, CLAIM_DUE_MAIL, [MAIL_MAX_ATTEMPTS, limit]);
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
