import type { ClaimedMail, MikroMailOutbox } from '@convo/db';
import { createTransport } from 'nodemailer';
import type { Logger } from './logger.ts';
import { type QueueWorker, startQueueWorker } from './queue-worker.ts';

/*
 * Sends the mail the sites queue (sign-in links). Any replica's worker may take any mail: the
 * queue is a table, claimed with SKIP LOCKED and leased by moving its next attempt out, so a
 * restart loses nothing and a mail goes out at least once. Without SMTP_URL the mail is written to
 * the log at info level instead, so a sign-in still works on a machine with no mail server.
 */

/** kick(): look for due mail now (a request just queued one). */
export type MailWorker = QueueWorker;

export interface MailOptions {
  smtpUrl: string | undefined;
  from: string;
  logger: Logger;
  /** How often to look for mail that is due (retries, other replicas' mail). */
  intervalMs?: number;
}

export function startMailWorker(queue: MikroMailOutbox, o: MailOptions): MailWorker {
  const transport = o.smtpUrl ? createTransport(o.smtpUrl) : null;
  const send = async (mail: ClaimedMail) => {
    if (!transport) {
      o.logger.info(
        { to: mail.recipient, subject: mail.subject, text: mail.body },
        'mail not sent (no SMTP_URL): here it is',
      );
      return;
    }
    await transport.sendMail({ from: o.from, to: mail.recipient, subject: mail.subject, text: mail.body });
  };

  const worker = startQueueWorker({
    name: 'the mail queue',
    logger: o.logger,
    intervalMs: o.intervalMs ?? 5_000,
    async step() {
      const due = await queue.claimDue(10);
      for (const mail of due) {
        try {
          await send(mail);
          await queue.sent(mail.id);
        } catch (err) {
          o.logger.warn({ err: (err as Error).message, mail: mail.id }, 'sending mail failed; it will be retried');
          await queue.failed(mail.id, (err as Error).message);
        }
      }
      return due.length > 0;
    },
  });
  return {
    kick: worker.kick,
    async stop() {
      await worker.stop();
      transport?.close();
    },
  };
}
