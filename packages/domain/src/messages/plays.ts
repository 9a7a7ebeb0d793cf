import { z } from 'zod';
import type { Viewer } from '../conversations/access.ts';
import { ZAuthor, ZUser } from '../conversations/views.ts';

/*
 * Played receipts: whether the other side watched a recorded message. A play is counted once per
 * viewer and viewing session, when the viewer has watched the recording for PLAY_SECONDS or
 * PLAY_SHARE of it, whichever comes first (or reached its end); the page's player says so with a
 * beacon at that moment. A message's own side never counts: its author, and the team for a
 * message by one of the team. Who sees a message's receipts: the team every message's, anyone
 * else their own messages'.
 */

/** Seconds of watching after which a play counts. */
export const PLAY_SECONDS = 5;
/** The share of a recording after which a play counts, when that comes before PLAY_SECONDS. */
export const PLAY_SHARE = 0.75;

/** The seconds a viewer watches a recording of `duration` seconds (0: unknown) before the play counts. */
export const playThreshold = (duration: number): number =>
  duration > 0 ? Math.min(PLAY_SECONDS, duration * PLAY_SHARE) : PLAY_SECONDS;

/** Who wrote a message, as the receipt rules ask: its author (null: anonymous), and whether they are on the team. */
export interface PlayedMessage {
  authorId: number | null;
  authorOnTeam: boolean;
}

/** Is a play of `m` by `viewer` (null: nobody known) a receipt? Never the message's own side's. */
export function playCounts(m: PlayedMessage, viewer: Viewer): boolean {
  if (viewer === null) return true;
  if (m.authorId !== null && viewer.userId === m.authorId) return false;
  return !(m.authorOnTeam && viewer.teamRole !== null);
}

/** Does `viewer` see the receipts of a message by `authorId`? The team every message's, a person their own's. */
export const seesPlays = (viewer: Viewer, authorId: number | null): boolean =>
  viewer !== null && (viewer.teamRole !== null || (authorId !== null && viewer.userId === authorId));

/** Who played a message: the signed-in viewers' names in the order they first played it, and the visitors counted. */
export interface PlaySummary {
  names: string[];
  visitors: number;
}

const visitorsText = (n: number) => (n === 1 ? '1 visitor' : `${n} visitors`);

/** "Played by Pat, Sam and 3 visitors"; "Not played yet" when nobody has. */
export function playedByText(s: PlaySummary): string {
  const parts = [...s.names, ...(s.visitors > 0 ? [visitorsText(s.visitors)] : [])];
  if (parts.length === 0) return 'Not played yet';
  const last = parts.pop();
  return `Played by ${parts.length > 0 ? `${parts.join(', ')} and ${last}` : last}`;
}

/** One play of a message, as get_message_views lists it and the `message_played` webhook sends it. */
export const ZMessageView = z
  .object({
    /** Who played it: a person signed in on the site, or `{"anonymous": true}` for a visitor. */
    viewer: ZAuthor,
    played_at: z.string().meta({ description: 'When the play was counted, ISO 8601, UTC.' }),
  })
  .meta({ id: 'MessageView' });

/** What get_message_views answers: the message's plays, oldest first. */
export const ZGetMessageViewsAnswer = z
  .object({
    message_id: z.number().int(),
    plays: z.number().int().meta({ description: 'How many plays were counted (once per viewer and session).' }),
    views: z.array(ZMessageView),
  })
  .meta({ id: 'GetMessageViewsAnswer' });

export type GetMessageViewsAnswer = z.infer<typeof ZGetMessageViewsAnswer>;

/** The `message_played` webhook's body (the Standard Webhooks envelope): one counted play. */
export const ZMessagePlayedEvent = z
  .object({
    type: z.literal('message_played'),
    timestamp: z.string().meta({ description: 'When the play was counted, ISO 8601, UTC.' }),
    data: z.object({
      message_id: z.number().int(),
      conversation_id: z.number().int(),
      /** Who played it: a person signed in on the site, or `{"anonymous": true}` for a visitor. */
      viewer: ZAuthor,
      played_at: z.string().meta({ description: 'The same time: when the play was counted.' }),
    }),
  })
  .meta({
    id: 'MessagePlayedEvent',
    description:
      'A recording was played past its receipt threshold (5 s or 75 %), once per viewer and session, never by its ' +
      'own side (its author; the team, for a message by the team).',
  });

/** The members get_messages adds to each message for its receipts. */
export const playFields = {
  plays: z
    .number()
    .int()
    .meta({
      description:
        'How many times its recording was played past the receipt threshold (5 s or 75 %), once per viewer and ' +
        'session, never by its own side (its author; the team, for a message by the team). 0 for a text message.',
    }),
  played_by: z.array(ZUser).meta({
    description: 'The signed-in people among them, in the order they first played it; visitors are counted only.',
  }),
};
