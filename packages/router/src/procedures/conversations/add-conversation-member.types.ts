import { NAME_MAX_LENGTH, ZConversation } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { conversationAfter, memberErrors, ZEmail, ZSlugOf } from './members.types.ts';

export const ZAddConversationMemberInput = z.object({
  slug: ZSlugOf,
  email: ZEmail,
  name: z
    .string()
    .max(NAME_MAX_LENGTH)
    .optional()
    .meta({ description: "The person's name: needed only when the address is nobody's on the account yet." }),
});

export const addConversationMemberSpec = {
  input: ZAddConversationMemberInput,
  output: ZConversation,
  meta: {
    openapi: {
      method: 'POST',
      path: '/conversations/add_conversation_member',
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
