import type { StoredMedia } from '../media/media.ts';
import { type LinkOptions, type PeopleDeps, replyProblem, replyText, sendSignInLink } from '../people/people.ts';
import type { SiteAccount, TemplateRef } from '../records.ts';
import { emailProblem, nameProblem } from '../shared/person.ts';
import { maySee, seesInternalNotes, type Viewer } from './access.ts';
import { momentPageText, momentProblem } from './moments.ts';
import type { SiteStore } from './ports.ts';
import { slugKey, slugProblem } from './slug.ts';
import { replyThread } from './threads.ts';

export interface ReplyForm {
  text: string;
  name?: string | undefined;
  email?: string | undefined;
  /** The form's own token: the same form sent twice posts once. */
  submitKey?: string | undefined;
  /** A recording sent with the form, already kept and measured; `text` is then its caption. */
  media?: StoredMedia | undefined;
  /** The message template the team member started from: its name, and its recording when none was sent. */
  template?: { ref: TemplateRef; media: StoredMedia | null } | undefined;
  /** An internal note (the reply form's box): the team's alone, and only the team writes one. */
  internal?: boolean | undefined;
  /** A message of the conversation whose thread it replies in (the thread's page sends it). */
  parentId?: number | undefined;
  /** The moment of the thread's recording it comments on (whole seconds; the form's "At"). */
  atSeconds?: number | undefined;
}

export type ReplyOutcome =
  /** Nothing this visitor may see: answered as a missing page. */
  | { kind: 'not_found' }
  | { kind: 'refused'; problem: string }
  /** `created` false: the same form was already posted, and nothing was written now. */
  | { kind: 'posted'; messageId: number; slug: string; created: boolean }
  /** The reply waits for whoever opens the link mailed to the address given (anyone's, new or known). */
  | { kind: 'check_email'; email: string };

/**
 * The conversation behind `slug` when `viewer` may reply to it (or start a recording for it): the
 * same rule as the page's (maySee), on the conversation without its messages; else null. `granted`:
 * the conversation an anonymous visitor's device started (its pass opens it).
 */
export async function replyTarget(
  deps: { site: SiteStore },
  account: SiteAccount,
  slug: string,
  viewer: Viewer,
  granted: number | null = null,
) {
  const conversation = slugProblem(slug) ? null : await deps.site.conversationAccess(account.id, slugKey(slug));
  if (!conversation) return null;
  return maySee(conversation, conversation.memberIds, viewer) || conversation.id === granted ? conversation : null;
}

/**
 * A reply from the conversation's page, by the spec's two settings: a signed-in user posts as
 * themselves (a private conversation only to its members); otherwise anonymously where
 * `allow_anonymous_messages` allows it. A reply under a name and e-mail address is never posted
 * on the visitor's word: it waits for the link mailed to that address, and whoever opens it and
 * confirms posts it, as the address's user (made then, with the name given, if it is nobody's).
 * The answer and the work are the same whoever owns the address, so the form tells no one who has
 * an account here.
 */
export async function postReply(
  deps: PeopleDeps & { site: SiteStore },
  account: SiteAccount,
  slug: string,
  viewer: Viewer,
  form: ReplyForm,
  link: LinkOptions,
  granted: number | null = null,
): Promise<ReplyOutcome> {
  const conversation = await replyTarget(deps, account, slug, viewer, granted);
  if (!conversation) return { kind: 'not_found' };
  if (form.internal && !seesInternalNotes(viewer)) {
    return { kind: 'refused', problem: 'Only the account’s team writes internal notes.' };
  }
  const thread = await replyThread(deps.replies, account.id, conversation.id, form.parentId, viewer);
  if (!thread) {
    return { kind: 'refused', problem: 'That message is not in this conversation (any more): reply without it.' };
  }
  const moment = momentProblem(form.atSeconds, thread);
  if (moment) return { kind: 'refused', problem: momentPageText(moment) };
  // A recording may go without a caption; a text reply needs its text.
  const media = form.media ?? form.template?.media ?? undefined;
  const problem = media && form.text.trim() === '' ? null : replyProblem(form.text);
  if (problem) return { kind: 'refused', problem };
  const text = media && form.text.trim() === '' ? '' : replyText(form.text);
  const submitKey = form.submitKey && /^[\w-]{16,64}$/.test(form.submitKey) ? form.submitKey : null;
  const post = async (authorId: number | null, claimedName: string | null = null): Promise<ReplyOutcome> => {
    const written = await deps.replies.insert(account.id, conversation.id, {
      authorId,
      text,
      submitKey,
      media,
      claimedName,
      template: form.template?.ref,
      internal: form.internal === true || thread.internal,
      parentId: thread.parentId,
      atSeconds: form.atSeconds ?? null,
    });
    // Deleted by the team between the page's check and the post: as a missing page.
    if (!written) return { kind: 'not_found' };
    return { kind: 'posted', messageId: written.id, slug: conversation.slug, created: written.created };
  };

  if (viewer) return post(viewer.userId);
  const email = form.email?.trim() ?? '';
  const name = (form.name ?? '').trim();
  if (conversation.allowAnonymousMessages && email === '') {
    // A name without an address is taken as given, and shown as nobody's word.
    if (name === '') return post(null);
    const problem = nameProblem(name);
    return problem ? { kind: 'refused', problem } : post(null, name);
  }

  const refusal = nameProblem(form.name ?? '') ?? emailProblem(email);
  if (refusal) {
    return {
      kind: 'refused',
      problem: conversation.allowAnonymousMessages
        ? `${refusal} (Leave both out to post anonymously.)`
        : `${refusal} This conversation takes replies from people who give their name and e-mail, or sign in.`,
    };
  }
  await sendSignInLink(deps, account, link, {
    email,
    name,
    returnPath: `/c/${conversation.slug}`,
    pending: {
      conversationId: conversation.id,
      text,
      submitKey,
      media,
      parentId: thread.parentId,
      atSeconds: form.atSeconds ?? null,
    },
  });
  return { kind: 'check_email', email };
}
