import { ZMessageReactionsAnswer } from '@convo/domain';
import type { OperationSpec } from '../../operation.ts';
import { reactionErrors, reactionRequest, ZReactionInput } from './add-reaction.types.ts';

export const removeReactionSpec = {
  input: ZReactionInput,
  output: ZMessageReactionsAnswer,
  meta: {
    openapi: {
      method: 'POST',
      path: '/messages/remove_reaction',
      summary: 'Take back a reaction on a message, as one of the team',
      tags: ['messages'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
  },
  doc: {
    description:
      'Ours: takes back the reaction `reaction` of the team member `user_email` on the message (one they had not ' +
      'given changes nothing). The page shows it at once; nothing is mailed or sent by webhook. Answers the ' +
      'message’s reactions as they are now.',
    example: { message_id: 42, reactions: [] },
    requestExamples: reactionRequest,
    errors: reactionErrors,
  },
} satisfies OperationSpec;
