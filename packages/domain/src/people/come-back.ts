import type { SiteAccount } from '../records.ts';
import type { MailOutbox, OutgoingMail } from '../shared/mail.ts';
import { conversationUrl } from '../shared/urls.ts';
import type { LinkOptions } from './people.ts';
import type { PeopleStore } from './ports.ts';

/*
 * A visitor's link back after an intake start under an address nobody confirmed (the intake
 * area's startConversation): the start's notify_event carries the address, and the notification
 * round that takes it makes the sign-in link and queues its mail, in its transaction, after the
 * visitor has their answer.
 */

/** What makes a link back: the sign-in links and the mail queue of the notification round's transaction. */
export interface ComeBackWrites {
  people: Pick<PeopleStore, 'createSignInLink'>;
  outbox: MailOutbox;
}

/** A start under an address nobody confirmed, as the notification round finds it: whom to mail a link back. */
export interface UnconfirmedStart {
  account: SiteAccount;
  slug: string;
  /** The start's message, which confirming the link puts the address's person's name on. */
  messageId: number;
  email: string;
  /** The name the form gave. */
  name: string;
}

/** How long the mailed link that brings a visitor back works: a week, once. */
export const COME_BACK_LINK_TTL_SECONDS = 7 * 24 * 3600;

/**
 * The mail a visitor gets when they start a conversation under an address: where it is, and a
 * link that confirms the address (signs them in and puts their name on the message). It goes to
 * an address nobody has confirmed, so it carries nothing the visitor wrote or chose (not their
 * words, not the name they gave): only the account's own words and the conversation's address.
 */
function comeBackMail(account: SiteAccount, started: { slug: string; email: string; signInUrl: string }): OutgoingMail {
  return {
    to: started.email,
    subject: `Confirm your conversation with ${account.name}`,
    text: [
      `A conversation with ${account.name} was started with this address.`,
      '',
      `If it was you, this link confirms it: it signs you in as ${started.email}, puts your name on your message and opens the conversation (it works once, for 7 days):`,
      started.signInUrl,
      '',
      `Until then your message shows as not verified, and we write to you about answers once you have confirmed. On the device you started it on, it opens at ${conversationUrl(account, started.slug)}`,
      '',
      'If you did not start this conversation, ignore this e-mail: nothing is shown under your address, and nobody is signed in.',
      '',
    ].join('\n'),
  };
}

/**
 * Makes an unconfirmed start's link back and queues its mail (the notification round does, in the
 * transaction that takes the start's event): the link signs the visitor in as the address's person
 * (made when confirmed, under the name the form gave) and puts that name on the message; it works
 * once, for a week.
 */
export async function mailComeBack(deps: ComeBackWrites, link: LinkOptions, started: UnconfirmedStart): Promise<void> {
  const { account, slug, email } = started;
  const token = link.newToken();
  await deps.people.createSignInLink(account.id, token, {
    email,
    name: started.name,
    returnPath: `/c/${slug}`,
    pending: null,
    claim: started.messageId,
    ttlSeconds: COME_BACK_LINK_TTL_SECONDS,
  });
  await deps.outbox.enqueue(account.id, comeBackMail(account, { slug, email, signInUrl: link.signInUrl(token) }));
}
