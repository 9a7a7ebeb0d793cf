import { CONVERSATION_STATES, MAX_TAGS, TAG_MAX_LENGTH, ZText, ZTitle, ZUpdatedConversation } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';
import { listedConversationExample, notFound } from './conversation.types.ts';
import { ZEmail } from './members.types.ts';

export const ZUpdateConversationInput = z.object({
  conversation_id: z.number().int().min(1).max(2_147_483_647),
  title: ZTitle.optional(),
  anyone_can_post: z.boolean().optional(),
  allow_anonymous_messages: z.boolean().optional(),
  allow_search_engines: z.boolean().optional(),
  state: z.enum(CONVERSATION_STATES).optional(),
  assignee_email: ZEmail.nullable()
    .optional()
    .meta({ description: "A member of the account's team, by e-mail address; null: assigned to nobody." }),
  archived: z.boolean().optional(),
  tags: z
    .array(ZText('tag').pipe(z.string().max(TAG_MAX_LENGTH)))
    .max(MAX_TAGS)
    .optional()
    .meta({
      description: 'Every tag it has after: names not given are taken off; a new name is made a tag of the account.',
    }),
});

export const updateConversationSpec = {
  input: ZUpdateConversationInput,
  output: ZUpdatedConversation,
  meta: {
    openapi: {
      method: 'POST',
      path: '/conversations/update_conversation',
      summary: 'Rename a conversation, change its settings or triage it',
      tags: ['conversations'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
  },
  doc: {
    description:
      'Not in the original service: renames one of the account’s conversations (`conversation_id`, its `id`), ' +
      'changes the settings it was made with, and triages it as the team does in its inbox (`state`, ' +
      '`assignee_email`, `archived`, `tags`), each only when given; at least one must be. Its slug, and so its ' +
      'URLs, never change. Answers the conversation as get_conversation does followed by its triage (`state`, ' +
      '`source`, `assignee`, `archived`), and announces `conversation_updated` to the webhook endpoints ' +
      'subscribed to it. Another account’s conversation is answered as a missing one.',
    example: {
      ...listedConversationExample,
      title: 'Tom Tester: invoice #1042',
      conversation_created_time: '2022-02-01 17:21:09.123456',
      conversation_credated_time_nice: 'February 1st, 2022 05:21PM UTC',
      state: 'waiting',
      source: 'intake',
      assignee: { id: 1, email: 'sam@example.com', name: 'Sam Support' },
      archived: false,
    },
    requestExamples: {
      'application/json': {
        conversation_id: 4,
        title: 'Tom Tester: invoice #1042',
        state: 'waiting',
        assignee_email: 'sam@example.com',
        tags: ['billing'],
      },
      'application/x-www-form-urlencoded': { conversation_id: 4, anyone_can_post: false },
    },
    errors: {
      ...BODY_ERRORS,
      '404': notFound('The account has no conversation with that id'),
      '422': {
        description: 'A member breaks its rule, the assignee is not on the team, or nothing is given to change',
        codes: ['invalid_input'],
      },
    },
  },
} satisfies OperationSpec;
