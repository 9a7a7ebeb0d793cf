import type { ConversationSettings } from './ports.ts';

/*
 * Who may see what: the account's team and the people in its conversations. Every reader (the
 * API's answers stand for the account as a whole; pages, embeds, mail and webhooks for a person)
 * asks these rules, never a flag of its own.
 */

/** The places on an account's team. Everyone else who takes part in a conversation is a participant. */
export const TEAM_ROLES = ['owner', 'admin', 'member'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

export const isTeamRole = (value: string | null | undefined): value is TeamRole =>
  TEAM_ROLES.some((role) => role === value);

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

/** Who adds people to a conversation and takes them out on its page: anyone on the account's team (who may see it). */
export const managesMembers = (viewer: Viewer): boolean => viewer !== null && viewer.teamRole !== null;

/**
 * May search engines index it (`allow_search_engines`)? Only a public conversation can be: a private
 * one never is, whatever its flag says.
 */
export const isIndexable = (c: ConversationSettings): boolean => c.anyoneCanPost && c.allowSearchEngines;
