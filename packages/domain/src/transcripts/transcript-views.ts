import { z } from 'zod';
import { TRANSCRIPT_STATUSES, type TranscriptStatus } from './transcribe-recording.ts';
import type { TranscriptSegment } from './transcripts.ts';

/*
 * A recording's transcript as those who may play it read it: its status, its words, its
 * captions' address. Where no engine is configured a transcript not made yet is `off`; one made
 * before (or found to have no audio) is still what it is.
 */

/** A message, named where its account (and conversation, when known: null for any) are checked with it. */
export interface MessageOfAccount {
  accountId: number;
  conversationId: number | null;
  messageId: number;
}

/** A transcript's row as the store keeps it. */
export interface KeptTranscript {
  status: Exclude<TranscriptStatus, 'off'>;
  language: string | null;
  text: string;
  segments: TranscriptSegment[];
  /** Why it failed, for the team; null unless failed (or failing and being tried again). */
  reason: string | null;
}

export interface TranscriptStore {
  /** The transcripts of the recordings of the account's messages `messageIds`, by message. */
  byMessages(accountId: number, messageIds: readonly number[]): Promise<Map<number, KeptTranscript>>;
  /**
   * Makes the transcript of the recording of the account's message `messageId` (in conversation
   * `conversationId`) again, from its first try; false when there is no such recording.
   */
  retry(message: MessageOfAccount): Promise<boolean>;
  /** Keeps the team's correction of a complete transcript (by `userId`); false when there is none. */
  correct(message: MessageOfAccount, segments: TranscriptSegment[], text: string, userId: number): Promise<boolean>;
}

/** The status a reader is told: `off` for one not made where no engine would make it. */
export function transcriptStatus(enabled: boolean, kept: KeptTranscript | undefined): TranscriptStatus {
  if (kept && kept.status !== 'pending') return kept.status;
  return enabled ? 'pending' : 'off';
}

/** A message's `transcript` in get_messages: null for a message without a recording kept here. */
export const ZTranscript = z
  .object({
    status: z.enum(TRANSCRIPT_STATUSES).meta({
      description:
        '`off`: no speech engine is configured (TRANSCRIBE_URL); `pending`: being made or tried again; `complete`; ' +
        '`no_audio`: the recording has no audio track; `failed`: the engine could not, after its tries (the team sees why).',
    }),
    language: z
      .string()
      .nullable()
      .meta({ description: 'The language heard (ISO 639-1), once complete.', example: 'en' }),
    text: z.string().nullable().meta({ description: 'What was said, once complete; null before.' }),
    captions_url: z.string().nullable().meta({
      description: 'Its captions (WebVTT) beside the recording, under the same access; null until complete.',
    }),
  })
  .nullable()
  .meta({ id: 'Transcript' });

/** The member get_messages adds to each message. */
export const transcriptFields = {
  transcript: ZTranscript.meta({
    description:
      'Its recording’s transcript, from the operator’s speech engine; null for a message without a recording kept here.',
  }),
};

/** The `message_transcribed` webhook's body (the Standard Webhooks envelope). */
export const ZMessageTranscribedEvent = z
  .object({
    type: z.literal('message_transcribed'),
    timestamp: z.string().meta({ description: 'When the transcript was made, ISO 8601, UTC.' }),
    data: z.object({
      message_id: z.number().int(),
      conversation_id: z.number().int(),
      transcript: z.object({
        status: z.literal('complete'),
        language: z.string().nullable(),
        text: z.string(),
        captions_url: z.string(),
      }),
    }),
  })
  .meta({
    id: 'MessageTranscribedEvent',
    description:
      'The speech engine made a recording’s transcript: once per message that carries the recording (internal ' +
      'notes aside), with the transcript as get_messages shows it. A correction by the team sends nothing.',
  });
