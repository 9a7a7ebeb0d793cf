import type { SiteAccount } from '../records.ts';
import { nameProblem } from '../shared/person.ts';
import { type OpenedLink, openSignInLink } from './open-sign-in-link.ts';
import { type PeopleDeps, returnPath } from './people.ts';

export type ConfirmOutcome =
  | { kind: 'unusable' }
  /** The address is nobody's yet, and the name it needs is missing or not a name. */
  | { kind: 'refused'; problem: string; link: OpenedLink }
  | { kind: 'signed_in'; redirect: string };

/**
 * Confirms a sign-in link (a POST from the page it opens, never a GET): a session for the
 * address's user, made then if the address is nobody's (with the name given with the reply, or on
 * the page), and the reply that waited for it posted, or the start it confirms put under their
 * name. The link is spent once.
 */
export async function completeSignIn(
  deps: Pick<PeopleDeps, 'people' | 'replies'>,
  account: SiteAccount,
  token: string,
  session: { token: string; ttlSeconds: number },
  form: { name?: string | undefined } = {},
): Promise<ConfirmOutcome> {
  const opened = await openSignInLink(deps, account, token);
  if (!opened) return { kind: 'unusable' };
  const name = (form.name ?? opened.name ?? '').trim();
  if (!opened.user) {
    const problem = nameProblem(name);
    if (problem) return { kind: 'refused', problem, link: opened };
  }
  const used = await deps.people.useSignInLink(account.id, token);
  if (!used) return { kind: 'unusable' };
  // Registered between the page and the POST by someone else's confirmation: it is that user.
  const user =
    opened.user ??
    (await deps.people.register(account.id, name, used.email)) ??
    (await deps.people.userByEmail(account.id, used.email));
  if (!user) return { kind: 'unusable' };
  await deps.people.createSession(account.id, user.id, session.token, session.ttlSeconds);
  const back = returnPath(used.returnPath);
  // A start under this address: its message is theirs now, and its conversation.
  const claimed = used.claim ? await deps.replies.claim(account.id, used.claim, user.id) : null;
  if (claimed) return { kind: 'signed_in', redirect: `${back}#message-${claimed.id}` };
  if (!used.pending) return { kind: 'signed_in', redirect: back };
  const written = await deps.replies.insert(account.id, used.pending.conversationId, {
    authorId: user.id,
    text: used.pending.text,
    submitKey: used.pending.submitKey,
    media: used.pending.media,
    parentId: used.pending.parentId ?? null,
    atSeconds: used.pending.atSeconds ?? null,
  });
  // The conversation was deleted while the link waited: signed in, with nothing to post into.
  return { kind: 'signed_in', redirect: written ? `${back}#message-${written.id}` : back };
}
