import { z } from 'zod';
import type { Viewer } from '../conversations/access.ts';
import { ZAuthor, ZUser } from '../conversations/views.ts';

/*
 * Reactions: a small fixed set of emoji anyone who may see a message may put on it, once of each
 * kind per person. A signed-in person reacts as themselves; a visitor nobody knows only where the
 * conversation takes anonymous messages, once of each kind per browser session. Everyone who sees
 * the message sees the counts and their own; the team sees who reacted.
 */

/** The set, in the order pages and answers show it. */
export const REACTIONS = [
  { name: 'thumbs_up', emoji: '👍', label: 'Thumbs up' },
  { name: 'heart', emoji: '❤️', label: 'Heart' },
  { name: 'laugh', emoji: '😂', label: 'Laugh' },
  { name: 'celebrate', emoji: '🎉', label: 'Celebrate' },
  { name: 'surprised', emoji: '😮', label: 'Surprised' },
  { name: 'thinking', emoji: '🤔', label: 'Thinking' },
] as const;

export type ReactionName = (typeof REACTIONS)[number]['name'];
export const REACTION_NAMES = REACTIONS.map((r) => r.name) as [ReactionName, ...ReactionName[]];

export const isReactionName = (value: string): value is ReactionName => REACTIONS.some((r) => r.name === value);

/** The emoji of a reaction. */
export const reactionEmoji = (name: ReactionName): string => REACTIONS.find((r) => r.name === name)?.emoji ?? '';

/** Who reacts: a signed-in person (by their id), or a visitor nobody knows (by their session's key). */
export type Reactor = { userId: number } | { session: string };

/** The key a reaction is kept once under: a person's, or an anonymous session's (a hash, 64 hex digits). */
export const reactorKey = (r: Reactor): string => ('userId' in r ? `user:${r.userId}` : r.session);

/** Who may react on a message they see: a signed-in person; a visitor nobody knows where the conversation takes anonymous messages. */
export const reactsOnPage = (viewer: Viewer, conversation: { allowAnonymousMessages: boolean }): boolean =>
  viewer !== null || conversation.allowAnonymousMessages;

/** Who reacts, by that rule: the person, or the visitor's session (a hash, 64 hex digits); null: nobody who may. */
export function reactorOf(
  viewer: Viewer,
  conversation: { allowAnonymousMessages: boolean },
  session: string,
): Reactor | null {
  if (!reactsOnPage(viewer, conversation)) return null;
  if (viewer) return { userId: viewer.userId };
  return /^[0-9a-f]{64}$/.test(session) ? { session } : null;
}

/** Does `viewer` see who reacted (their names), beyond the counts? The team. */
export const seesReactors = (viewer: Viewer): boolean => viewer !== null && viewer.teamRole !== null;

/** One kind of reaction on a message: how many, whether the reader is among them, and (for the team) who. */
export interface ReactionCount {
  reaction: ReactionName;
  count: number;
  mine: boolean;
  /** The signed-in people among them, by when they reacted. */
  names: string[];
}

const countText = (n: number) => (n === 1 ? '1 reaction' : `${n} reactions`);

/** "Thumbs up: 3 reactions, yours among them (Pat, Sam)": a reaction's button, read aloud. */
export function reactionLabel(r: ReactionCount, named: boolean): string {
  const label = REACTIONS.find((k) => k.name === r.reaction)?.label ?? r.reaction;
  const who = named && r.names.length > 0 ? ` (${r.names.join(', ')})` : '';
  return `${label}: ${countText(r.count)}${r.mine ? ', yours among them' : ''}${who}`;
}

export const ZReactionName = z.enum(REACTION_NAMES).meta({
  id: 'ReactionName',
  description: `One of the fixed set: ${REACTIONS.map((r) => `\`${r.name}\` ${r.emoji}`).join(', ')}.`,
});

/** One kind of reaction on a message, as the API shows it. */
export const ZReaction = z
  .object({
    reaction: ZReactionName,
    emoji: z.string().meta({ example: '👍' }),
    count: z
      .number()
      .int()
      .meta({ description: 'How many reacted so (people, and visitors by their browser session).' }),
    users: z.array(ZUser).meta({
      description: 'The signed-in people among them, by when they reacted; visitors are counted only.',
    }),
  })
  .meta({ id: 'Reaction' });

/** The member get_messages adds to each message. */
export const reactionFields = {
  reactions: z.array(ZReaction).meta({
    description:
      'Its reactions, the kinds someone chose in the fixed set’s order (none: an empty list). One of each kind per ' +
      'person; a visitor nobody knows reacts where the conversation takes anonymous messages, once per browser session.',
  }),
};

/** What add_reaction and remove_reaction answer: the message's reactions as they are now. */
export const ZMessageReactionsAnswer = z
  .object({ message_id: z.number().int(), reactions: reactionFields.reactions })
  .meta({ id: 'MessageReactionsAnswer' });

export type MessageReactionsAnswer = z.infer<typeof ZMessageReactionsAnswer>;

/** The `reaction_added` webhook's body (the Standard Webhooks envelope). */
export const ZReactionAddedEvent = z
  .object({
    type: z.literal('reaction_added'),
    timestamp: z.string().meta({ description: 'When it was added, ISO 8601, UTC.' }),
    data: z.object({
      message_id: z.number().int(),
      conversation_id: z.number().int(),
      reaction: ZReactionName,
      emoji: z.string(),
      /** Who reacted: a person, or `{"anonymous": true}` for a visitor. */
      user: ZAuthor,
      created_at: z.string().meta({ description: 'The same time: when it was added.' }),
    }),
  })
  .meta({
    id: 'ReactionAddedEvent',
    description:
      'Someone reacted on a message (on its page, or through add_reaction): once per message, kind and person; ' +
      'taking it back and adding it again sends it again.',
  });
