import { ZConversation } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';
import { conversationAfter, memberErrors, ZEmail, ZSlugOf } from './members.types.ts';

export const ZRemoveConversationMemberInput = z.object({ slug: ZSlugOf, email: ZEmail });

export const removeConversationMemberSpec = {
  input: ZRemoveConversationMemberInput,
  output: ZConversation,
  meta: {
    openapi: {
      method: 'POST',
      path: '/conversations/remove_conversation_member',
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
