import type { Readable } from 'node:stream';
import { REPLY_ADDRESS_MAX_USES, type ReceiveDeps, type ReceivedOutcome, receiveReplyMail } from '@convo/domain';
import { signInLinks } from '@convo/pages';
import { type Envelope, readReplyMail } from './read-reply.ts';

/*
 * One reply mail taken in, whichever receiver it came by (the HTTP relay endpoint today; the SMTP
 * listener and IMAP polling feed the same): read, then posted by the domain's receiveReplyMail
 * with the services the pages' own replies use.
 */
export async function receiveMail(
  services: Omit<ReceiveDeps, 'link'>,
  domain: string,
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
      link: signInLinks,
    },
    mail,
    { domain, maxUses: REPLY_ADDRESS_MAX_USES },
  );
}
