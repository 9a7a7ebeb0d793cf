import { replyProblem, replyText } from '../people/people.ts';
import type { ReplyStore } from '../people/ports.ts';
import type { SiteAccount } from '../records.ts';
import type { MailOutbox } from '../shared/mail.ts';
import { emailProblem, NAME_MAX_LENGTH, nameProblem } from '../shared/person.ts';
import { clockMicros, type EpochMicros } from '../shared/time.ts';
import { conversationUrl } from '../shared/urls.ts';
import { runsConversation, type Viewer } from './access.ts';
import { draftConversation } from './create-conversation.ts';
import { type ConversationStore, type MemberStore, SlugTakenError } from './ports.ts';
import { generateSlug, slugKey } from './slug.ts';
import { titleProblem } from './title.ts';

/*
 * The team starts a conversation from its pages ("New conversation"), and may send it to someone:
 * they become a member and are mailed its link with the first message. It is the team's (source
 * `team`), private unless the form says otherwise, and its first message is the starter's, so it
 * waits on the other side (the triage rule). Everything is checked before anything is written.
 */

export interface TeamStartForm {
  title: string;
  text: string;
  /** Public: anyone with the link may read and post; else only its members and the owners and admins. */
  anyoneCanPost: boolean;
  /** Who it is sent to: an address (a new person's name, if they are new: else their address's start). */
  to?: { email: string; name?: string | undefined } | undefined;
  submitKey?: string | undefined;
}

export interface TeamStartDeps {
  conversations: ConversationStore;
  replies: ReplyStore;
  members: MemberStore;
  outbox: MailOutbox;
  clock?: () => EpochMicros;
}

export type TeamStartOutcome = { kind: 'started'; id: number; slug: string } | { kind: 'refused'; problem: string };

/** A slug drawn again when it collides (as create does). */
const SLUG_ATTEMPTS = 3;

function formProblem(form: TeamStartForm): string | null {
  if (form.title.trim() === '') return 'Give the conversation a title.';
  const title = titleProblem(form.title.trim());
  if (title) return title;
  if (form.text.trim() !== '') {
    const text = replyProblem(form.text, 'message');
    if (text) return text;
  }
  if (form.to) {
    const email = emailProblem(form.to.email.trim());
    if (email) return email;
    if (form.to.name?.trim()) return nameProblem(form.to.name);
  }
  return null;
}

export async function startTeamConversation(
  deps: TeamStartDeps,
  account: SiteAccount,
  starter: { viewer: Viewer; name: string },
  form: TeamStartForm,
): Promise<TeamStartOutcome> {
  const viewer = starter.viewer;
  if (!viewer || !runsConversation(viewer))
    return { kind: 'refused', problem: 'Only the team starts conversations here.' };
  const problem = formProblem(form);
  if (problem) return { kind: 'refused', problem };
  const settings = { anyoneCanPost: form.anyoneCanPost, allowAnonymousMessages: false, allowSearchEngines: false };
  // Every setting is the form's, and its starter is its one member: the account's defaults, naming
  // and owner decide nothing here.
  const draft = draftConversation(
    { titleTemplate: '', defaults: settings, owner: null },
    { title: form.title.trim(), ...settings, memberIds: [viewer.userId], source: 'team' },
    null,
    (deps.clock ?? clockMicros)(),
  );
  // The form's key makes a second send of the same form (a double click, a reload) the first's
  // conversation, as an Idempotency-Key does for create_conversation.
  const submitKey = form.submitKey && /^[\w-]{16,64}$/.test(form.submitKey) ? form.submitKey : null;
  let id: number;
  for (let attempt = 1; ; attempt++) {
    try {
      if (submitKey === null) {
        id = (await deps.conversations.insert(account.id, draft)).id;
        break;
      }
      const once = await deps.conversations.insertOnce(account.id, draft, {
        key: `team-start:${submitKey}`,
        request: `team-start:${viewer.userId}`,
        answer: (stored) => ({ id: stored.id, slug: draft.slug }),
      });
      if (once.kind === 'stored') {
        id = once.stored.id;
        break;
      }
      const first = once.kind === 'replay' ? once.answer : null;
      if (
        first &&
        typeof first === 'object' &&
        'slug' in first &&
        typeof first.slug === 'string' &&
        'id' in first &&
        typeof first.id === 'number'
      ) {
        return { kind: 'started', id: first.id, slug: first.slug };
      }
      return { kind: 'refused', problem: 'This form was already used. Open “New conversation” again.' };
    } catch (e) {
      if (!(e instanceof SlugTakenError) || attempt >= SLUG_ATTEMPTS) throw e;
      draft.slug = generateSlug();
    }
  }
  const text = replyText(form.text);
  if (text !== '') await deps.replies.insert(account.id, id, { authorId: viewer.userId, text, submitKey });
  if (form.to) {
    const email = form.to.email.trim();
    const name = form.to.name?.trim() || (email.split('@')[0] ?? email).slice(0, NAME_MAX_LENGTH);
    const change = await deps.members.addConversationMember(account.id, slugKey(draft.slug), { email, name });
    if (change?.person) {
      await deps.outbox.enqueue(account.id, {
        to: change.person.email,
        subject: `${starter.name} started “${draft.title}” with you on ${account.name}`,
        text: [
          `${starter.name} (${account.name}) started a conversation with you: “${draft.title}”.`,
          ...(text ? ['', ...text.split('\n').map((line) => `> ${line}`)] : []),
          '',
          `Open it and reply here: ${conversationUrl(account, draft.slug)}`,
          '',
          'If the page asks you to sign in, use this e-mail address: a sign-in link is mailed to it.',
          '',
        ].join('\n'),
      });
    }
  }
  return { kind: 'started', id, slug: draft.slug };
}
