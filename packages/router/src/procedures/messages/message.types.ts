import { conversationExample } from '../conversations/conversation.types.ts';

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
};
