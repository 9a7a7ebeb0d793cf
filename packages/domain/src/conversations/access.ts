import type { ConversationSettings, TeamRole } from '../records.ts';
import { DOMAIN_ERRORS, DomainError } from '../shared/errors.ts';

/*
 * Who may see what: the account's team and the people in its conversations. Every reader (the
 * API's answers stand for the account as a whole; pages, embeds, mail and webhooks for a person)
 * asks these rules, never a flag of its own.
 */

/** Who is looking at a page: a signed-in person with their team role (null: a participant), or nobody known. */
export type Viewer = { userId: number; teamRole: TeamRole | null } | null;

/** Owners and admins see every conversation of the account, private ones included. */
export const seesEveryConversation = (role: TeamRole | null): boolean => role === 'owner' || role === 'admin';

/**
 * The one privacy rule (`anyone_can_post`): a public conversation is visible to anyone with its
 * address; a private one to its members (the spec's member users) and to the account's owners and
 * admins. A registered person who posts in a conversation becomes its member (the stores write that
 * in the message's own statement); an anonymous post adds nobody. To anyone else a private conversation does not exist, so the rule's callers answer it
 * exactly as a missing one.
 */
export function maySee(c: ConversationSettings, memberIds: readonly number[], viewer: Viewer): boolean {
  if (c.anyoneCanPost) return true;
  if (viewer === null) return false;
  return seesEveryConversation(viewer.teamRole) || memberIds.includes(viewer.userId);
}

/**
 * Who sees internal notes (and writes them): anyone on the account's team, in a conversation they
 * may see. To everyone else (a participant, a visitor, an embed's reader, another account) a note
 * does not exist: it is answered as a missing message.
 */
export const seesInternalNotes = (viewer: Viewer): boolean => viewer !== null && viewer.teamRole !== null;

/** Who adds people to a conversation and takes them out on its page: anyone on the account's team (who may see it). */
export const managesMembers = (viewer: Viewer): boolean => viewer !== null && viewer.teamRole !== null;

/**
 * Who runs a conversation on its page (renames it, tags it, sets its state, assigns it, archives
 * it): anyone on the account's team (who may see it).
 */
export const runsConversation = (viewer: Viewer): boolean => viewer !== null && viewer.teamRole !== null;

/**
 * Who changes who may see and post in a conversation on its page (public or private, anonymous
 * replies, search engines): its owners and admins, who see every conversation already.
 */
export const changesVisibility = (viewer: Viewer): boolean => viewer !== null && seesEveryConversation(viewer.teamRole);

/**
 * Who deletes a conversation on its page, for good, recordings and all: its owners and admins.
 */
export const deletesConversation = (viewer: Viewer): boolean =>
  viewer !== null && seesEveryConversation(viewer.teamRole);

/**
 * Who manages the account's intake pages and workflows: its owners and admins. What they save
 * publishes recordings to anyone (a page's welcome), posts as the team (`post_message as`) and adds
 * members to every new conversation, so it is for those who see every conversation already.
 */
export const managesIntake = (viewer: Viewer): boolean => viewer !== null && seesEveryConversation(viewer.teamRole);

/**
 * Who saves an account's settings: the account as a whole (its API token, the operator's CLI, a
 * seed), or a person signed in to its site, with their own rights.
 */
export type Actor = 'account' | Viewer;

/** The refusal of a person who may not manage the intake, as every use case that saves it says it. */
export function requireIntakeManager(actor: Actor): void {
  if (actor !== 'account' && !managesIntake(actor)) throw new DomainError('forbidden', DOMAIN_ERRORS.forbidden.example);
}

/**
 * Who may reach a message of `c` by its number alone (`/embeds/messages/<key>/<id>`,
 * `/media/<key>/<id>`: numbers anyone can count), beyond the privacy rule (maySee): a listed
 * conversation's (one search engines may index) anyone; an unlisted public one's only a request
 * that carries its slug (`slugGiven`: the only key to it) or a reader who is more than anyone with
 * its address (a member, the team's owners and admins); a private one's as its page.
 */
export function reachableByNumber(
  c: ConversationSettings,
  memberIds: readonly number[],
  viewer: Viewer,
  slugGiven: boolean,
): boolean {
  if (!maySee(c, memberIds, viewer)) return false;
  if (isIndexable(c) || slugGiven || !c.anyoneCanPost) return true;
  return viewer !== null && (seesEveryConversation(viewer.teamRole) || memberIds.includes(viewer.userId));
}

/**
 * May search engines index it (`allow_search_engines`)? Only a public conversation can be: a private
 * one never is, whatever its flag says.
 */
export const isIndexable = (c: ConversationSettings): boolean => c.anyoneCanPost && c.allowSearchEngines;
