import type { AddressInfo } from 'node:net';
import type { PgMailOutbox } from '@convo/db';
import { SMTPServer } from 'smtp-server';
import { createLogger } from '../../src/logger.ts';
import { startMailWorker } from '../../src/workers/mail.ts';

/*
 * A real SMTP server in the test process (smtp-server), so tests receive the mail the server sends
 * through nodemailer and follow the links in it.
 */

export interface Mail {
  to: string[];
  /** The message as received, with quoted-printable soft line breaks undone. */
  text: string;
}

export interface Mailbox {
  url: string;
  mails: Mail[];
  /** The first mail to `to` that arrives (waiting up to 10 s). */
  next(to: string): Promise<Mail>;
  close(): Promise<void>;
}

const decodeQuotedPrintable = (raw: string) =>
  raw
    .replace(/=\r?\n/g, '')
    // A run of encoded bytes is UTF-8 text (an emoji, a curly quote), read as such.
    .replace(/(?:=[0-9A-F]{2})+/g, (run: string) => Buffer.from(run.replaceAll('=', ''), 'hex').toString('utf8'));

export async function openMailbox(): Promise<Mailbox> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        raw += chunk;
      });
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text: decodeQuotedPrintable(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async next(to) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const i = mails.findIndex((m) => m.to.includes(to));
        if (i >= 0) return mails.splice(i, 1)[0] as Mail;
        if (Date.now() > deadline) throw new Error(`no mail to ${to} arrived`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A header of the mail as sent (its folded lines joined), or undefined. */
export const mailHeader = (mail: Mail, name: string): string | undefined =>
  new RegExp(`^${name}: ?(.*)$`, 'im')
    .exec((mail.text.split(/\r?\n\r?\n/)[0] ?? '').replace(/\r?\n(?=[ \t])/g, ''))?.[1]
    ?.trim();

/** The sign-in link in a mail. */
export function signInLink(mail: Mail): string {
  const link = /https?:\/\/\S+\/sign-in\/[\w-]+/.exec(mail.text)?.[0];
  if (!link) throw new Error(`no sign-in link in:\n${mail.text}`);
  return link;
}

/**
 * The harness's mail, delivered: a mailbox, and the server's own mail worker sending to it over
 * SMTP (woken by each queued mail, as in a server process).
 */
export async function deliverMailTo(
  services: {
    mailQueue: PgMailOutbox;
    onMailQueued(listener: () => void): void;
  },
  /** How often the worker looks on its own (it is woken by each mail a request queues). */
  intervalMs = 200,
): Promise<{ mailbox: Mailbox; kick(): void; close(): Promise<void> }> {
  const mailbox = await openMailbox();
  const worker = startMailWorker(services.mailQueue, {
    smtpUrl: mailbox.url,
    from: 'Conversations <no-reply@example.com>',
    logger: createLogger('silent'),
    intervalMs,
  });
  services.onMailQueued(worker.kick);
  return {
    mailbox,
    kick: worker.kick,
    async close() {
      await worker.stop();
      await mailbox.close();
    },
  };
}
