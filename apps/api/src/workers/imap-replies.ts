import { ImapFlow } from 'imapflow';
import type { Logger } from '../logger.ts';
import { type MailReceiving, type ReceiveServices, receiveMail } from '../mail/receive.ts';
import { type QueueWorker, startQueueWorker } from './queue-worker.ts';

/*
 * Reply by e-mail for an operator without an MX (`INBOUND_IMAP_URL`): a mailbox the reply
 * addresses land in (a catch-all, or a provider's plus-addressing), polled with imapflow. Each
 * round connects, takes up to BATCH unseen mails, hands each to receiveMail, and deletes those
 * acted on; one the server cannot take now (busy, past a limit) stays unseen for a later round.
 * Every replica may poll the same mailbox: a mail two of them read at once is posted once (its
 * Message-ID is taken in once).
 */

/** Mails one round takes; more make the next round come at once. */
const BATCH = 20;

export interface ImapPollOptions {
  /** imaps://user:password@host[:port][/mailbox] (imap://: STARTTLS when offered). */
  url: string;
  intervalMs: number;
  maxBytes: number;
  logger: Logger;
  onError?: () => void;
}

/** Where to connect and as whom, from INBOUND_IMAP_URL. */
export function imapAccount(url: string) {
  const u = new URL(url);
  const secure = u.protocol === 'imaps:';
  return {
    host: u.hostname,
    port: Number(u.port || (secure ? 993 : 143)),
    secure,
    auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) },
    mailbox: decodeURIComponent(u.pathname.slice(1)) || 'INBOX',
  };
}

export function startImapReplies(
  services: ReceiveServices,
  receiving: MailReceiving,
  options: ImapPollOptions,
): QueueWorker {
  const { mailbox, ...account } = imapAccount(options.url);
  return startQueueWorker({
    name: 'the reply mailbox',
    logger: options.logger,
    intervalMs: options.intervalMs,
    onError: options.onError,
    async step() {
      const client = new ImapFlow({ ...account, logger: false, disableAutoIdle: true });
      await client.connect();
      try {
        const lock = await client.getMailboxLock(mailbox);
        try {
          const unseen = (await client.search({ seen: false, deleted: false }, { uid: true })) || [];
          for (const uid of unseen.slice(0, BATCH)) {
            const range = String(uid);
            const mail = await client.fetchOne(range, { source: true, size: true }, { uid: true });
            if (!mail) continue;
            const source = mail.source;
            const fits = source !== undefined && (mail.size ?? source.length) <= options.maxBytes;
            const outcome = fits ? await receiveMail(services, receiving, source) : null;
            if (outcome === null) {
              options.logger.warn({ uid, bytes: mail.size }, 'a mail in the reply mailbox is over the size limit');
            } else if (outcome.kind === 'later' || outcome.kind === 'limited') {
              continue;
            }
            await client.messageFlagsAdd(range, ['\\Seen'], { uid: true });
            await client.messageDelete(range, { uid: true });
          }
          return unseen.length > BATCH;
        } finally {
          lock.release();
        }
      } finally {
        await client.logout().catch(() => undefined);
      }
    },
  });
}
