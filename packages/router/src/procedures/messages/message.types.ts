import { z } from 'zod';
import { conversationExample } from '../conversations/conversation.types.ts';

/** A message of the account, named by its id (get_message_views', the reactions' input). */
export const ZMessageId = z
  .number()
  .int()
  .min(1)
  .max(2_147_483_647)
  .meta({ description: "One of the account's messages, by its id (`messages[].id`)." });

/** The messages resource's example message: the conversations' example, as the resource shows it. */
export const messageDetailExample = {
  ...conversationExample.messages[0],
  author: { anonymous: false, id: 1, name: 'Olive Owner', email: 'olive@acme.example.com' },
  text: '<p>Thanks! Your refund is on its way: <a href="https://acme.example.com/refunds" rel="nofollow ugc noopener">https://acme.example.com/refunds</a></p>',
  message_template: null,
  message_created_time: '2026-11-27 14:03:09.123456',
  message_credated_time_nice: 'November 27th, 2026 02:03PM UTC',
  internal: false,
  parent_message_id: null,
  at_seconds: null,
  plays: 3,
  played_by: [{ id: 7, email: 'pat@client.example.com', name: 'Pat Client' }],
  reactions: [
    {
      reaction: 'thumbs_up' as const,
      emoji: '👍',
      count: 2,
      users: [{ id: 7, email: 'pat@client.example.com', name: 'Pat Client' }],
    },
  ],
  transcript: null,
};
