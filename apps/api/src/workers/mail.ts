import type { ClaimedMail, PgMailOutbox } from '@convo/db';
import { mailHtml } from '@convo/pages';
import type { Transporter } from 'nodemailer';
import type { Logger } from '../logger.ts';
import { type QueueWorker, startQueueWorker } from './queue-worker.ts';

/*
 * Sends the mail the sites queue (sign-in links). Any replica's worker may take any mail: the
 * queue is a table, claimed with SKIP LOCKED and leased by moving its next attempt out, so a
 * restart loses nothing and a mail goes out at least once. Without SMTP_URL the mail is written to
 * the log at info level instead, so a sign-in still works on a machine with no mail server.
 */

/** A header value on one line: line breaks (and the runs around them) become a space. */
export const oneLine = (value: string): string => value.replace(/\s*[\r\n]+\s*/g, ' ');

/** kick(): look for due mail now (a request just queued one). */
export type MailWorker = QueueWorker;

export interface MailOptions {
  smtpUrl: string | undefined;
  from: string;
  logger: Logger;
  /** How often to look for mail that is due (retries, other replicas' mail). */
  intervalMs?: number;
  /** Told when a batch fails: /metrics counts it. */
  onError?: () => void;
  /** What becomes of a mail without SMTP_URL (default: written to the log at info level). */
  unsent?: (mail: { to: string; subject: string; text: string; replyTo?: string | undefined }) => void;
}

export function startMailWorker(queue: PgMailOutbox, mailing: MailOptions): MailWorker {
  // Made with the first mail to send: nodemailer is some 20 MB of memory a server without mail to
  // send never needs.
  let transport: Promise<Transporter> | null = null;
  const connect = (smtpUrl: string) => {
    transport ??= import('nodemailer').then((n) => n.createTransport(smtpUrl));
    return transport;
  };
  const send = async (mail: ClaimedMail) => {
    if (!mailing.smtpUrl && mailing.unsent) {
      mailing.unsent({
        to: mail.recipient,
        subject: mail.subject,
        text: mail.body,
        replyTo: mail.headers?.['Reply-To'],
      });
      return;
    }
    if (!mailing.smtpUrl) {
      mailing.logger.info(
        { to: mail.recipient, subject: mail.subject, text: mail.body },
        'mail not sent (no SMTP_URL): here it is',
      );
      return;
    }
    await (await connect(mailing.smtpUrl)).sendMail({
      from: mailing.from,
      to: mail.recipient,
      // One line, whatever an account's name or a title held: no header can be added through it.
      subject: oneLine(mail.subject),
      text: mail.body,
      html: mail.html ?? mailHtml(mail.body),
      // Each on one line too: the values are ours (signed URLs), but no line break gets through.
      headers: Object.fromEntries(Object.entries(mail.headers ?? {}).map(([name, value]) => [name, oneLine(value)])),
    });
  };

  const worker = startQueueWorker({
    name: 'the mail queue',
    logger: mailing.logger,
    intervalMs: mailing.intervalMs ?? 5_000,
    onError: mailing.onError,
    async step() {
      const due = await queue.claimDue(10);
      // The batch's sent mails are marked in one statement; a crash before it sends them again
      // (at least once, as the lease promises).
      const sent: number[] = [];
      for (const mail of due) {
        try {
          await send(mail);
          sent.push(mail.id);
        } catch (err) {
          mailing.logger.warn(
            { err: (err as Error).message, mail: mail.id },
            'sending mail failed; it will be retried',
          );
          await queue.failed(mail.id, (err as Error).message);
        }
      }
      await queue.sent(sent);
      return due.length > 0;
    },
  });
  return {
    kick: worker.kick,
    async stop() {
      await worker.stop();
      (await transport)?.close();
    },
  };
}
