import type { MailOutbox, PeopleStore, ReplyStore, SiteAccount, SiteStore } from '../ports.ts';
import { slugKey, slugProblem } from '../slug.ts';
import { textProblem } from '../text.ts';
import { maySee, type Viewer } from './view-conversation.ts';

export const REPLY_MAX_LENGTH = 10_000;
export const NAME_MAX_LENGTH = 255;
export const EMAIL_MAX_LENGTH = 320;
/** Something@something, nothing more: the address is proven by the mail it receives, not by a pattern. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

/** Why a reply's text cannot be posted, or null. Counted in characters after trimming. */
export function replyProblem(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed.length === 0) return 'Write a reply before posting it.';
  if (Array.from(trimmed).length > REPLY_MAX_LENGTH) return `A reply is at most ${REPLY_MAX_LENGTH} characters.`;
  return textProblem('The reply', trimmed);
}

export function nameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (trimmed.length === 0) return 'Give your name.';
  if (trimmed.length > NAME_MAX_LENGTH) return `A name is at most ${NAME_MAX_LENGTH} characters.`;
  return textProblem('The name', trimmed);
}

export function emailProblem(email: string): string | null {
  const trimmed = email.trim();
  if (trimmed.length === 0) return 'Give your e-mail address.';
  if (trimmed.length > EMAIL_MAX_LENGTH || !EMAIL_PATTERN.test(trimmed) || textProblem('e-mail', trimmed)) {
    return 'That is not an e-mail address.';
  }
  return null;
}

/** Where a sign-in may send someone back to: a page of the same site, never another host. */
export function returnPath(path: string | null | undefined): string {
  return path && /^\/c\/[A-Za-z0-9_-]{1,100}$/.test(path) ? path : '/';
}

export interface ReplyForm {
  text: string;
  name?: string | undefined;
  email?: string | undefined;
  /** The form's own token: the same form sent twice posts once. */
  submitKey?: string | undefined;
}

export type ReplyOutcome =
  /** Nothing this visitor may see: answered as a missing page. */
  | { kind: 'not_found' }
  | { kind: 'refused'; problem: string }
  | { kind: 'posted'; messageId: number; slug: string }
  /** The e-mail is an existing user's: the reply waits for them to open the link mailed to it. */
  | { kind: 'check_email'; email: string };

export interface PeopleDeps {
  site: SiteStore;
  people: PeopleStore;
  replies: ReplyStore;
  outbox: MailOutbox;
}

export interface LinkOptions {
  /** The address of the sign-in link for a token. */
  signInUrl(token: string): string;
  ttlSeconds: number;
  newToken(): string;
}

/**
 * A reply from the conversation's page, by the spec's two settings: a signed-in user posts as
 * themselves (a private conversation only to its members); otherwise anonymously where
 * `allow_anonymous_messages` allows it, or with a name and e-mail, which registers a new user of the
 * account. An e-mail that is already a user's is not taken over: the reply waits for the sign-in
 * link mailed to that address.
 */
export async function postReply(
  deps: PeopleDeps,
  account: SiteAccount,
  slug: string,
  viewer: Viewer,
  form: ReplyForm,
  link: LinkOptions,
): Promise<ReplyOutcome> {
  // The same rule as the page's (maySee), on the conversation without its messages.
  const conversation = slugProblem(slug) ? null : await deps.site.conversationForReply(account.id, slugKey(slug));
  if (!conversation || !maySee(conversation, conversation.memberIds, viewer)) return { kind: 'not_found' };
  const problem = replyProblem(form.text);
  if (problem) return { kind: 'refused', problem };
  const text = form.text.trim();
  const submitKey = form.submitKey && /^[\w-]{16,64}$/.test(form.submitKey) ? form.submitKey : null;
  const post = async (authorId: number | null): Promise<ReplyOutcome> => {
    const { id } = await deps.replies.insert(account.id, conversation.id, { authorId, text, submitKey });
    return { kind: 'posted', messageId: id, slug: conversation.slug };
  };

  if (viewer) return post(viewer.userId);
  const email = form.email?.trim() ?? '';
  if (conversation.allowAnonymousMessages && email === '') return post(null);

  const refusal = nameProblem(form.name ?? '') ?? emailProblem(email);
  if (refusal) {
    return {
      kind: 'refused',
      problem: conversation.allowAnonymousMessages
        ? `${refusal} (Leave both out to post anonymously.)`
        : `${refusal} This conversation takes replies from people who give their name and e-mail, or sign in.`,
    };
  }
  const registered = await deps.people.register(account.id, (form.name ?? '').trim(), email);
  if (registered) return post(registered.id);
  // An existing user's address: only its owner may post as them, after opening the mailed link.
  const existing = await deps.people.userByEmail(account.id, email);
  if (existing) {
    await sendSignInLink(deps, account, existing, `/c/${conversation.slug}`, link, {
      conversationId: conversation.id,
      text,
      submitKey,
    });
  }
  return { kind: 'check_email', email };
}

async function sendSignInLink(
  deps: Pick<PeopleDeps, 'people' | 'outbox'>,
  account: SiteAccount,
  user: { id: number; email: string },
  back: string,
  link: LinkOptions,
  pending: { conversationId: number; text: string; submitKey: string | null } | null,
): Promise<void> {
  const token = link.newToken();
  await deps.people.createSignInLink(account.id, user.id, token, {
    ttlSeconds: link.ttlSeconds,
    returnPath: back,
    pending,
  });
  const minutes = Math.round(link.ttlSeconds / 60);
  await deps.outbox.enqueue(account.id, {
    to: user.email,
    subject: `Sign in to ${account.name}`,
    text: [
      pending
        ? `Open this link to sign in to ${account.name} and post your reply:`
        : `Open this link to sign in to ${account.name}:`,
      '',
      link.signInUrl(token),
      '',
      `It works once, for ${minutes} minutes. If you did not ask for it, ignore this e-mail.`,
      '',
    ].join('\n'),
  });
}

/**
 * Someone asks for a sign-in link. It is mailed only when the address is a user's of this account;
 * the caller answers the same either way, so the form cannot tell who is a user.
 */
export async function requestSignIn(
  deps: Pick<PeopleDeps, 'people' | 'outbox'>,
  account: SiteAccount,
  email: string,
  back: string,
  link: LinkOptions,
): Promise<{ refused: string } | null> {
  const problem = emailProblem(email);
  if (problem) return { refused: problem };
  const user = await deps.people.userByEmail(account.id, email.trim());
  if (user) await sendSignInLink(deps, account, user, returnPath(back), link, null);
  return null;
}

/**
 * Opens a sign-in link: a session for its user, and the reply that waited for it posted. Null when
 * the link is unknown, used or expired.
 */
export async function completeSignIn(
  deps: Pick<PeopleDeps, 'people' | 'replies'>,
  account: SiteAccount,
  token: string,
  session: { token: string; ttlSeconds: number },
): Promise<{ redirect: string } | null> {
  if (!/^[\w-]{20,100}$/.test(token)) return null;
  const used = await deps.people.useSignInLink(account.id, token);
  if (!used) return null;
  await deps.people.createSession(account.id, used.userId, session.token, session.ttlSeconds);
  const back = returnPath(used.returnPath);
  if (!used.pending) return { redirect: back };
  const { id } = await deps.replies.insert(account.id, used.pending.conversationId, {
    authorId: used.userId,
    text: used.pending.text,
    submitKey: used.pending.submitKey,
  });
  return { redirect: `${back}#message-${id}` };
}
