import { REACTIONS, ZMessageReactionsAnswer, ZReactionName } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationError, type OperationSpec } from '../../operation.ts';
import { ZMessageId } from './message.types.ts';

export const ZReactionInput = z.object({
  message_id: ZMessageId,
  reaction: ZReactionName,
  user_email: z
    .string()
    .max(320)
    .meta({ description: "Who reacts: the account's owner or a member of its team, by e-mail address." }),
});

const example = {
  message_id: 42,
  reactions: [
    {
      reaction: 'thumbs_up' as const,
      emoji: '👍',
      count: 3,
      users: [{ id: 1, email: 'owner@acme.example.com', name: 'Ada Owner' }],
    },
  ],
};

/** The errors both reaction operations answer. */
export const reactionErrors: Record<string, OperationError> = {
  ...BODY_ERRORS,
  '404': { description: 'The account has no such message (or it is hidden)', codes: ['message_not_found'] },
  '422': {
    description: `\`message_id\` is not a whole number ≥ 1, \`reaction\` is not one of ${REACTIONS.map((r) => `\`${r.name}\``).join(', ')}, or \`user_email\` is nobody on the account's team`,
    codes: ['invalid_input'],
  },
};

export const reactionRequest = {
  'application/json': { message_id: 42, reaction: 'thumbs_up', user_email: 'owner@acme.example.com' },
};

export const addReactionSpec = {
  input: ZReactionInput,
  output: ZMessageReactionsAnswer,
  meta: {
    openapi: {
      method: 'POST',
      path: '/messages/add_reaction',
      summary: 'React on a message, as one of the team',
      tags: ['messages'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
  },
  doc: {
    description:
      'Ours: one of a fixed set of emoji on any of the account’s messages, by the team member `user_email`, once of ' +
      'each kind per person (a reaction already there changes nothing and answers the same). The conversation’s ' +
      'page shows it at once to everyone who sees the message (live), the message’s author hears of it in their ' +
      'mail digest, and a `reaction_added` webhook is sent. Answers the message’s reactions as they are now, as ' +
      'get_messages shows them.',
    example,
    requestExamples: reactionRequest,
    errors: reactionErrors,
  },
} satisfies OperationSpec;
