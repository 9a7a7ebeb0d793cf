import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH, ZConversation } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { listedConversationExample, notFound } from './conversation.types.ts';

/*
 * Adding people to a conversation and taking them out: beside the spec's three operations (the
 * spec has none for members), in the same style: POST under /conversations, the conversation by
 * its slug, the conversation as get_conversation answers it.
 */

const ZSlugOf = z
  .string()
  .meta({ description: "The conversation's slug, ignoring case (it must match: no fallback)." });
const ZEmail = z.string().max(EMAIL_MAX_LENGTH).meta({ description: "The person's e-mail address." });

export const ZAddMemberInput = z.object({
  slug: ZSlugOf,
  email: ZEmail,
  name: z
    .string()
    .max(NAME_MAX_LENGTH)
    .optional()
    .meta({ description: "The person's name: needed only when the address is nobody's on the account yet." }),
});

export const ZRemoveMemberInput = z.object({ slug: ZSlugOf, email: ZEmail });

const conversationAfter = {
  ...listedConversationExample,
  conversation_created_time: '2022-02-01 17:21:09.123456',
  conversation_credated_time_nice: 'February 1st, 2022 05:21PM UTC',
};

const memberErrors = {
  ...BODY_ERRORS,
  '404': notFound('No conversation of the account has this slug'),
};

export const addMemberSpec = {
  label: 'add_conversation_member',
  input: ZAddMemberInput,
  output: ZConversation,
  meta: {
    openapi: {
      method: 'POST',
      path: '/conversations/add_conversation_member',
      operationId: 'addConversationMember',
      summary: "Add a person to a conversation's members (users), by e-mail",
      tags: ['conversations'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
  },
  doc: {
    description:
      "Not in the spec. The address's user joins the conversation's `users` at once (made with `name` when the address " +
      "is nobody's on the account yet) and is mailed where the conversation is. A private conversation is then open " +
      'to them once they sign in on its page. Adding a member already there changes nothing and mails nobody. A change ' +
      "moves the account's change mark, so a conditional get_conversation answers anew.",
    example: {
      ...conversationAfter,
      users: [...conversationAfter.users, { id: 9, email: 'sam@example.org', name: 'Sam Example' }],
    },
    requestExamples: {
      'application/json': { slug: 'billing-question', email: 'sam@example.org', name: 'Sam Example' },
      'application/x-www-form-urlencoded': { slug: 'billing-question', email: 'sam@example.org' },
    },
    errors: {
      ...memberErrors,
      '422': {
        description:
          "The address is not an e-mail address, the name is not a name, or the address is nobody's and no name was given",
        codes: ['invalid_input'],
      },
    },
  },
} satisfies OperationSpec;

export const removeMemberSpec = {
  label: 'remove_conversation_member',
  input: ZRemoveMemberInput,
  output: ZConversation,
  meta: {
    openapi: {
      method: 'POST',
      path: '/conversations/remove_conversation_member',
      operationId: 'removeConversationMember',
      summary: "Take a person out of a conversation's members (users)",
      tags: ['conversations'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
  },
  doc: {
    description:
      "Not in the spec. The address's user leaves the conversation's `users` at once; their messages stay. A private " +
      "conversation is closed to them from their next page (but to the account team's owners and admins). Taking " +
      "out someone who is not a member changes nothing. A change moves the account's change mark.",
    example: conversationAfter,
    requestExamples: {
      'application/json': { slug: 'billing-question', email: 'sam@example.org' },
      'application/x-www-form-urlencoded': { slug: 'billing-question', email: 'sam@example.org' },
    },
    errors: {
      ...memberErrors,
      '422': { description: 'A field is missing or too long', codes: ['invalid_input'] },
    },
  },
} satisfies OperationSpec;
