import type { AccountContext, SiteAccount } from '../records.ts';
import { DOMAIN_ERRORS, DomainError } from '../shared/errors.ts';
import type { MailOutbox } from '../shared/mail.ts';
import { conversationUrl } from '../shared/urls.ts';
import { managesMembers, maySee, type Viewer } from './access.ts';
import type { ConversationStore, MemberChange, MemberStore, SiteStore } from './ports.ts';

import { slugKey, slugProblem } from './slug.ts';

import { type ConversationView, conversationView } from './views.ts';

/*
 * The team (on a conversation's page) and the account's API clients add people to a conversation
 * and take them out, by e-mail address. A person added is told by mail where the conversation is;
 * one the account does not know yet is made with the name given. Every change that changes the
 * members moves the account's change mark, so conditional reads see it at once.
 */

export interface MemberDeps {
  members: MemberStore;
  outbox: MailOutbox;
}

export interface MemberRequest {
  slug: string;
  email: string;
  /** The person's name: needed when the address is nobody's on the account yet. */
  name?: string | undefined;
}

export type MemberOutcome =
  | { kind: 'not_found' }
  | { kind: 'refused'; problem: string }
  | { kind: 'done'; change: MemberChange };

export const refusedSlug = (slug: string) => (slugProblem(slug) ? DOMAIN_ERRORS.conversation_not_found.message : null);

/** The mail a person added to a conversation gets: where it is, and that their address signs them in. */
export const invitation = (account: SiteAccount, change: MemberChange) => ({
  subject: `You were added to "${change.title}" on ${account.name}`,
  text: [
    `You were added to the conversation "${change.title}" on ${account.name}.`,
    '',
    `Open it here: ${conversationUrl(account, change.slug)}`,
    '',
    'If the page asks you to sign in, use this e-mail address: a sign-in link is mailed to it.',
    '',
  ].join('\n'),
});

/**
 * The API's answer to a change of members: the conversation as get_conversation answers it, read
 * after the change, or the domain error the outcome stands for.
 */
export async function memberAnswer(
  deps: { conversations: ConversationStore },
  account: AccountContext,
  outcome: MemberOutcome,
): Promise<ConversationView> {
  if (outcome.kind === 'refused') throw new DomainError('invalid_input', outcome.problem);
  const record =
    outcome.kind === 'done'
      ? await deps.conversations.findOne(account.id, { slugKey: slugKey(outcome.change.slug) })
      : null;
  // The slug's own conversation, never get_conversation's fallback to the latest one.
  if (!record || outcome.kind !== 'done' || record.id !== outcome.change.conversationId) {
    throw new DomainError('conversation_not_found');
  }
  return conversationView(account, record);
}

export type TeamMemberOutcome = MemberOutcome | { kind: 'forbidden' };

/**
 * Ends the access of every device that started the conversation on an intake page (their passes
 * issued until now open it no more), from its page: by someone on the team who may see it. The
 * person of a named start keeps what their membership and sign-in give them.
 */
export async function endStartingPasses(
  deps: Pick<MemberDeps, 'members'> & { site: SiteStore },
  account: SiteAccount,
  viewer: Viewer,
  slug: string,
): Promise<{ kind: 'not_found' } | { kind: 'forbidden' } | { kind: 'done'; slug: string }> {
  const access = slugProblem(slug) ? null : await deps.site.conversationAccess(account.id, slugKey(slug));
  if (!access || !maySee(access, access.memberIds, viewer)) return { kind: 'not_found' };
  if (!managesMembers(viewer)) return { kind: 'forbidden' };
  await deps.members.endPasses(account.id, access.id);
  return { kind: 'done', slug: access.slug };
}
