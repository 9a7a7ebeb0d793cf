import { readFileSync } from 'node:fs';
import { replyTokenHash, replyTokenOf } from '@convo/domain';
import { SMTPServer } from 'smtp-server';
import type { Logger } from '../logger.ts';
import { type MailReceiving, type ReceiveServices, receiveMail } from './receive.ts';

/*
 * The built-in SMTP listener of reply by e-mail (`INBOUND_SMTP_PORT`): the domain's MX, or a
 * relay, delivers answers to it. It is smtp-server (Nodemailer's, the protocol and its extensions:
 * SIZE, PIPELINING, 8BITMIME, SMTPUTF8, STARTTLS when a certificate is given), with no AUTH: it
 * takes mail for our reply addresses only, refusing any other recipient at RCPT TO (so it relays
 * nothing and a guessed address costs one lookup), a mail over the size limit as it arrives, and
 * hands each mail to receiveMail, whose outcome becomes the reply code: 250 when it was taken in
 * (posted, dropped as automatic or seen before, or answered with our own mail), 550 for a sender
 * who is not the address's person, 451 to try again later.
 */

/** An SMTP refusal: smtp-server answers with its code and message. */
class SmtpRefusal extends Error {
  readonly responseCode: number;

  constructor(responseCode: number, message: string) {
    super(message);
    this.responseCode = responseCode;
  }
}

export interface SmtpListenerOptions {
  port: number;
  host: string;
  /** PEM files for STARTTLS; null: it is not offered. */
  tls: { cert: string; key: string } | null;
  maxBytes: number;
  logger: Logger;
}

export interface SmtpListener {
  /** Where it listens (the port the system chose, when asked for 0). */
  port: number;
  close(): Promise<void>;
}

/** Connections at once; more wait for the kernel's backlog (a sender's MTA retries). */
const MAX_CLIENTS = 100;

export async function startSmtpListener(
  services: ReceiveServices,
  receiving: MailReceiving,
  options: SmtpListenerOptions,
): Promise<SmtpListener> {
  const tls = options.tls ? { cert: readFileSync(options.tls.cert), key: readFileSync(options.tls.key) } : null;
  const server = new SMTPServer({
    name: receiving.domain,
    banner: 'replies only',
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ?? {}),
    size: options.maxBytes,
    maxClients: MAX_CLIENTS,
    socketTimeout: 60_000,
    logger: false,
    async onRcptTo(address, _session, callback) {
      try {
        const token = replyTokenOf(address.address, receiving.domain);
        const known = token ? await services.replyAddresses.byToken(await replyTokenHash(token)) : null;
        callback(known ? null : new SmtpRefusal(550, '5.1.1 No such reply address here'));
      } catch (err) {
        options.logger.warn({ err: (err as Error).message }, 'a reply address could not be looked up');
        callback(new SmtpRefusal(451, '4.3.0 Try again later'));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (!stream.sizeExceeded) chunks.push(chunk);
      });
      stream.on('error', (err) => callback(err));
      stream.on('end', async () => {
        if (stream.sizeExceeded) {
          callback(new SmtpRefusal(552, `5.3.4 A reply is at most ${options.maxBytes} bytes`));
          return;
        }
        try {
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : null;
          const to = session.envelope.rcptTo.map((r) => r.address);
          const outcome = await receiveMail(services, receiving, Buffer.concat(chunks), {
            from,
            to,
            ip: session.remoteAddress,
            helo: session.hostNameAppearsAs,
          });
          switch (outcome.kind) {
            case 'unknown':
              return callback(new SmtpRefusal(550, '5.1.1 No such reply address here'));
            case 'later':
              return callback(new SmtpRefusal(451, `4.3.0 ${outcome.reason}`));
            case 'limited':
              return callback(new SmtpRefusal(451, `4.7.1 Too many mails just now: try again later`));
            case 'dropped':
              // A stranger's mail is refused, so their own server tells them; an automatic one is
              // taken and forgotten, so no auto-responder answers back.
              return outcome.why === 'stranger' || outcome.why === 'unauthenticated'
                ? callback(new SmtpRefusal(550, `5.7.1 Refused: ${outcome.reason}`))
                : callback(null);
            case 'posted':
            case 'bounced':
              return callback(null);
          }
        } catch (err) {
          options.logger.error({ err }, 'a reply mail could not be taken in');
          callback(new SmtpRefusal(451, '4.3.0 Try again later'));
        }
      });
    },
  });
  server.on('error', (err) => options.logger.warn({ err: err.message }, 'the SMTP listener reported an error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const bound = server.server.address();
  const port = typeof bound === 'object' && bound ? bound.port : options.port;
  options.logger.info({ host: options.host, port, starttls: options.tls !== null }, 'SMTP listener for replies');
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
