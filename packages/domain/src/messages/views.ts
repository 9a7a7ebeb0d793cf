import { z } from 'zod';
import { ZMessage } from '../conversations/views.ts';
import { transcriptFields } from '../transcripts/transcript-views.ts';
import { playFields } from './plays.ts';
import { reactionFields } from './reactions.ts';

/*
 * The messages resource's wire shapes. A message as create_message and get_messages answer it is
 * the spec's Message with the members the original service adds there (its template, its creation
 * time twice, the second spelled as the conversation's is, its plays, its reactions, its transcript) and two of ours. The three spec'd
 * conversation operations keep their Message as it is: nothing here is added to it.
 */

export const ZMessageDetail = ZMessage.extend({
  message_template: z
    .object({ id: z.number().int(), name: z.string() })
    .nullable()
    .meta({ description: 'The template the message was made from, as it was named then; null when none.' }),
  message_created_time: z.string().meta({
    description: 'When it was posted, UTC, `YYYY-MM-DD HH:MM:SS.ffffff`.',
    example: '2026-11-27 14:03:09.123456',
  }),
  message_credated_time_nice: z.string().meta({
    description: 'The same time for people (spelled as the original service spells it).',
    example: 'November 27th, 2026 02:03PM UTC',
  }),
  internal: z.boolean().meta({
    description: "An internal note: only the account's team sees it (create_message's `internal`).",
  }),
  parent_message_id: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'The message whose thread it replies in; null for a message of the conversation itself.' }),
  at_seconds: z.number().int().nullable().meta({
    description:
      "A comment at a moment: the moment of its thread's recording it speaks of, whole seconds from the start; null for none.",
  }),
  ...playFields,
  ...reactionFields,
  ...transcriptFields,
}).meta({ id: 'MessageDetail' });

export type MessageDetailView = z.infer<typeof ZMessageDetail>;

/** What get_messages answers. */
export const ZGetMessagesAnswer = z.object({ messages: z.array(ZMessageDetail) }).meta({ id: 'GetMessagesAnswer' });

export type GetMessagesAnswer = z.infer<typeof ZGetMessagesAnswer>;
