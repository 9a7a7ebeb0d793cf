import { REPLY_ADDRESS_MAX_USES, type ReceiveDeps, type ReceivedOutcome, receiveReplyMail } from '@convo/domain';
import { signInLinks } from '@convo/pages';
import { authenticationProblem } from './authenticate.ts';
import { type Envelope, readReplyMail } from './read-reply.ts';

/*
 * One reply mail taken in, whichever receiver it came by (the SMTP listener, the HTTP relay
 * endpoint, IMAP polling): read, then posted by the domain's receiveReplyMail with the services
 * the pages' own replies use.
 */

/** What every receiver shares: the reply addresses' domain and the limits of mail taken in. */
export interface MailReceiving {
  domain: string;
  /** Mails from one person an hour, and for one account (INBOUND_MAIL_LIMIT_PER_PERSON, _PER_ACCOUNT; 0: none). */
  perPersonPerHour: number;
  perAccountPerHour: number;
  /** SPF, DKIM and DMARC are checked (INBOUND_MAIL_AUTH), through these DNS servers (empty: the system's); null: not. */
  auth?: { dnsServers: readonly string[] } | null | undefined;
}

export type ReceiveServices = Omit<ReceiveDeps, 'link'>;

export async function receiveMail(
  services: ReceiveServices,
  receiving: MailReceiving,
  raw: Buffer,
  envelope?: Envelope,
): Promise<ReceivedOutcome> {
  const read = await readReplyMail(raw, envelope);
  const mail = receiving.auth
    ? {
        ...read,
        authentication: await authenticationProblem(raw, envelope, {
          domain: receiving.domain,
          dnsServers: receiving.auth.dnsServers,
        }),
      }
    : read;
  return receiveReplyMail({ ...services, link: signInLinks }, mail, { ...receiving, maxUses: REPLY_ADDRESS_MAX_USES });
}
