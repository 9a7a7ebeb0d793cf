import type { Readable } from 'node:stream';
import { REPLY_ADDRESS_MAX_USES, type ReceiveDeps, type ReceivedOutcome, receiveReplyMail } from '@convo/domain';
import { signInLinks } from '@convo/pages';
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
}

export type ReceiveServices = Omit<ReceiveDeps, 'link'>;

export async function receiveMail(
  services: ReceiveServices,
  receiving: MailReceiving,
  raw: Buffer | Readable,
  envelope?: Envelope,
): Promise<ReceivedOutcome> {
  const mail = await readReplyMail(raw, envelope);
  return receiveReplyMail(
    {
      people: services.people,
      replies: services.replies,
      outbox: services.outbox,
      site: services.site,
      media: services.media,
      uploads: services.uploads,
      replyAddresses: services.replyAddresses,
      visitorLimits: services.visitorLimits,
      link: signInLinks,
    },
    mail,
    { ...receiving, maxUses: REPLY_ADDRESS_MAX_USES },
  );
}
