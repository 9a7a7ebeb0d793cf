import { draftConversation } from '../conversations/create-conversation.ts';
import type { NewConversation } from '../conversations/ports.ts';
import { SlugTakenError } from '../conversations/ports.ts';
import { generateSlug } from '../conversations/slug.ts';
import { startedTitle } from '../conversations/title.ts';
import type { StoredMedia } from '../media/media.ts';
import { replyProblem, replyText } from '../people/people.ts';
import type { AccountContext, SiteAccount, UserRecord, WorkflowRecord } from '../records.ts';
import { emailProblem, nameProblem } from '../shared/person.ts';
import { clockMicros, type EpochMicros } from '../shared/time.ts';

/*
 * A visitor starts a conversation on an intake page (`/p/<key>`, its embed, or `/` for the primary
 * one): the same conversation `create_conversation` makes through that page (draftConversation:
 * the account's title convention, the page's workflow copied, `via_primary_intake_page` /
 * `intake_page_id`), private (between the visitor and the team), with the page's team and the
 * visitor as members and the visitor's message first. A visitor who is not signed in is mailed a
 * link that signs them in from anywhere (people/come-back.ts, after the answer: the notification
 * round makes it): an address typed into a form signs nobody in (the site recognises the device by a
 * pass of its own).
 */

/** An intake page as its visitors see it, with what starting a conversation on it needs. */
export interface PublicIntakePage {
  id: number;
  key: string;
  title: string;
  welcomeText: string;
  /** Its name, as the team calls it ("Contact us"). */
  name: string;
  /** How conversations started on it are titled (empty: "{name}: {words}"). */
  conversationTitle: string;
  /**
   * The welcome recording (a message's, kept here and not hidden): which message, its kind and
   * measured length; null when the page has none.
   */
  welcomeRecording: { messageId: number; kind: string; seconds: number } | null;
  allowAnonymous: boolean;
  primary: boolean;
  workflow: WorkflowRecord | null;
  /** The team members who join every conversation started here. */
  teamIds: number[];
  account: Pick<AccountContext, 'titleTemplate' | 'defaults' | 'owner'>;
  /**
   * Everything above as it was read (a digest): a start made from a page read earlier writes
   * nothing if the page is no longer so (`page_changed`), and is made again from the page as it is.
   */
  version: string;
}

/** Everything one start writes, in one statement. */
export interface IntakeStart {
  /** The page it is made from, by its key, as read (its version): nothing is written if it changed. */
  page: { key: string; version: string };
  conversation: NewConversation;
  /**
   * Who the visitor is; null for an anonymous start. `confirmed`: signed in as the address's
   * person, who posts it. Else the message is posted under the name, unconfirmed (no author, no
   * member), until the link mailed to the address is confirmed (the start's notify_event carries
   * the address, and the notification round makes the link and its mail after the answer:
   * people/come-back.ts); nobody is made or found for it but to refuse the team's address.
   */
  visitor: { name: string; email: string; confirmed: boolean } | null;
  message: { text: string; submitKey: string | null; media?: StoredMedia | undefined };
}

export type IntakeStartResult =
  | {
      kind: 'started';
      conversationId: number;
      slug: string;
      messageId: number;
      /** The visitor's person; null for an anonymous start. */
      authorId: number | null;
      created: boolean;
      /** When it was started (epoch milliseconds): now, or the first time for a form sent again. */
      startedAt: number;
    }
  /** The address is a team member's: they sign in to start a conversation under it. */
  | { kind: 'team_address' }
  /** The form token is another form's (a reply's): nothing is started. */
  | { kind: 'form_used' }
  /** The page is no longer as it was read (changed, disabled, no longer primary): nothing is started. */
  | { kind: 'page_changed' };

export interface IntakeStore {
  /**
   * The enabled intake page of the account with `key` (ignoring case), or its primary one (null);
   * else null. `recent`: as this process last read it, if it did (a start checks it is still so).
   */
  page(accountId: number, key: string | null, options?: { recent?: boolean }): Promise<PublicIntakePage | null>;
  /**
   * Writes a start: the person (if new), the conversation, its members, the message, their events
   * and the mail. The same form token again writes nothing and answers the conversation it started.
   */
  start(accountId: number, start: IntakeStart): Promise<IntakeStartResult>;
  /** Keeps a one-time code (by its hash) that gives `grant` once, until `ttlSeconds` from now. */
  keepPassCode(accountId: number, codeHash: string, grant: string, ttlSeconds: number): Promise<void>;
  /** The grant of a code kept and not expired, taken (it gives nothing again); else null. */
  takePassCode(accountId: number, codeHash: string): Promise<string | null>;
}

export interface IntakeForm {
  text: string;
  name?: string | undefined;
  email?: string | undefined;
  submitKey?: string | undefined;
  media?: StoredMedia | undefined;
}

export type StartOutcome =
  | { kind: 'refused'; problem: string }
  | Extract<IntakeStartResult, { kind: 'started' } | { kind: 'page_changed' }>;

/** A form token used already (or another form's), said to whoever sends it again. */
export const INTAKE_FORM_USED = 'This form was already used. Reload the page to start a conversation.';

/** A slug drawn again when it collides (as create does). */
const SLUG_ATTEMPTS = 3;

/** Who the form says the visitor is, or why that will not do; null for an anonymous start. */
function visitorOf(page: PublicIntakePage, form: IntakeForm): { name: string; email: string } | null | string {
  const name = (form.name ?? '').trim();
  const email = (form.email ?? '').trim();
  if (page.allowAnonymous && name === '' && email === '') return null;
  const problem = nameProblem(name) ?? emailProblem(email);
  if (!problem) return { name, email };
  return page.allowAnonymous ? `${problem} (Leave both out to start anonymously.)` : problem;
}

export async function startConversation(
  deps: { intake: IntakeStore; clock?: () => EpochMicros },
  account: SiteAccount,
  page: PublicIntakePage,
  form: IntakeForm,
  /** Signed in: the form's name and address are theirs, and they need no link back. */
  device: { signedIn: boolean },
): Promise<StartOutcome> {
  const textProblem = form.media && form.text.trim() === '' ? null : replyProblem(form.text, 'message');
  if (textProblem) return { kind: 'refused', problem: textProblem };
  const given = visitorOf(page, form);
  if (typeof given === 'string') return { kind: 'refused', problem: given };
  // An address typed into a form is nobody's word: the message waits under the name, unconfirmed.
  const visitor = given && { ...given, confirmed: device.signedIn };
  const owner: UserRecord | null = page.account.owner;
  const conversation = draftConversation(
    page.account,
    {
      // Who and what, for the team's inbox; the account's naming when neither says anything.
      title:
        startedTitle(
          visitor?.name ?? null,
          { text: form.text, mediaKind: form.media?.kind },
          { pattern: page.conversationTitle, page: page.name, now: new Date() },
        ) ?? undefined,
      anyoneCanPost: false,
      allowAnonymousMessages: visitor === null,
      allowSearchEngines: false,
      memberIds: page.teamIds.length > 0 ? page.teamIds : owner ? [owner.id] : [],
      source: 'intake',
    },
    page,
    (deps.clock ?? clockMicros)(),
  );
  const message = {
    text: form.media && form.text.trim() === '' ? '' : replyText(form.text),
    submitKey: form.submitKey && /^[\w-]{16,64}$/.test(form.submitKey) ? form.submitKey : null,
    media: form.media,
  };
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await deps.intake.start(account.id, {
        page: { key: page.key, version: page.version },
        conversation,
        visitor,
        message,
      });
      if (result.kind === 'form_used') {
        return { kind: 'refused', problem: INTAKE_FORM_USED };
      }
      if (result.kind === 'team_address') {
        return {
          kind: 'refused',
          problem: `${visitor?.email} belongs to the team of ${account.name}: sign in to start a conversation under it.`,
        };
      }
      return result;
    } catch (e) {
      if (!(e instanceof SlugTakenError) || attempt >= SLUG_ATTEMPTS) throw e;
      conversation.slug = generateSlug();
    }
  }
}
