import { z } from 'zod';
import type { OperationError } from '../../operation.ts';

/*
 * What the three conversation procedures share beside the wire shapes (those are the domain's,
 * views.ts): the page number's schema, the examples, the lookup's 404.
 */

const PAGE_RULE = 'page must be a whole number ≥ 1';
/** Any whole number from 1; a page past the last (however far) is a 404, as the use case answers. */
export const ZPage = z.number({ error: PAGE_RULE }).int(PAGE_RULE).min(1, PAGE_RULE);

/** The examples the OpenAPI document shows, shared by the three operations. */
export const conversationExample = {
  id: 42,
  title: 'Billing question',
  slug: 'billing-question',
  public: true,
  via_primary_intake_page: false,
  intake_page_id: null,
  conversation_url: 'https://acme.example.com/c/billing-question',
  conversation_embed_url: 'https://acme.example.com/embeds/conversations/acme/billing-question',
  anyone_can_post: true,
  allow_anonymous_messages: true,
  allow_search_engines: false,
  tags: [{ id: 3, name: 'billing' }],
  users: [{ id: 1, email: 'olive@acme.example.com', name: 'Olive Owner' }],
  messages: [
    {
      id: 7,
      conversation_id: 42,
      message_type: 'text',
      recorded_duration_seconds: 0,
      author: { anonymous: true },
      message_url: 'https://acme.example.com/c/billing-question#message-7',
      embed_message_url: 'https://acme.example.com/embeds/messages/acme/7&show_author=true',
      download_media_url: null,
      text: 'Why was I charged twice?',
    },
  ],
};

export const listedConversationExample = {
  ...conversationExample,
  workflow: {
    id: 2,
    name: 'Support triage',
    steps: [
      {
        trigger: { type: 'conversation.created' },
        action: { type: 'post_message', as: 'sam@acme.example', text: 'Thanks for writing! We answer within a day.' },
        state: 'done',
        due_at: null,
        done_at: '2022-02-01T17:21:10.004Z',
        error: null,
        runs: 1,
      },
      {
        trigger: { type: 'no_reply', from: 'team', within_seconds: 86_400 },
        action: { type: 'notify', emails: ['sam@acme.example'] },
        state: 'pending',
        due_at: '2022-02-02T17:21:09.123Z',
        done_at: null,
        error: null,
        runs: 0,
      },
    ],
  },
};

/** The error a lookup answers when there is nothing to show (its text is the spec's: DOMAIN_ERRORS.conversation_not_found). */
export const notFound = (description: string): OperationError => ({ description, codes: ['conversation_not_found'] });
