import type { ConversationSource, ConversationState } from '../records.ts';
import { textProblem } from '../shared/text.ts';

/*
 * The team's triage of a conversation: its state, its assignee, whether it is archived, its tags.
 * How a state moves by itself (a message from the other side opens it and brings it back from the
 * archive; a reply by the team moves an open one to waiting) is written by the statements that
 * add messages (reply-store.ts), the rule stated once here.
 */

/** A conversation's triage as its page shows it to the team. */
export interface ConversationTriage {
  state: ConversationState;
  source: ConversationSource;
  assigneeId: number | null;
  archived: boolean;
}

/** How each state reads in the inbox and on the conversation's page. */
export const STATE_LABELS: Record<ConversationState, string> = {
  open: 'Open',
  waiting: 'Waiting on them',
  closed: 'Closed',
};

/** How each way a conversation begins reads after "via" (an intake page is named where it is known). */
export const SOURCE_LABELS: Record<ConversationSource, string> = {
  api: 'the API',
  intake: 'an intake page',
  team: 'the team',
};

/** The state a conversation is in after a message: the rule the message statements write in SQL. */
export function stateAfterMessage(state: ConversationState, byTeam: boolean): ConversationState {
  if (!byTeam) return 'open';
  return state === 'open' ? 'waiting' : state;
}

export const TAG_MAX_LENGTH = 100;
export const MAX_TAGS = 20;

/** What is wrong with a conversation's tags as given, or null. */
export function tagsProblem(tags: readonly string[]): string | null {
  for (const tag of tags) {
    const name = tag.trim();
    if (name.length === 0) return 'a tag must not be empty';
    if (name.length > TAG_MAX_LENGTH) return `a tag must be at most ${TAG_MAX_LENGTH} characters`;
    const problem = textProblem('tag', name);
    if (problem) return problem;
  }
  if (normalTags(tags).length > MAX_TAGS) return `a conversation has at most ${MAX_TAGS} tags`;
  return null;
}

/** The tags as kept: trimmed, each name once ignoring case (its first spelling). */
export function normalTags(tags: readonly string[]): string[] {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const tag of tags) {
    const name = tag.trim();
    const key = name.toLowerCase();
    if (name.length === 0 || seen.has(key)) continue;
    seen.add(key);
    kept.push(name);
  }
  return kept;
}

/** A form's one field of tags, "billing, urgent": the names between its commas. */
export const tagsFromText = (text: string): string[] => text.split(',').filter((t) => t.trim().length > 0);
