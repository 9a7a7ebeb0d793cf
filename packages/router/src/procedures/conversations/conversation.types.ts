import { MAX_PAGE } from '@convo/domain';
import { z } from 'zod';
import type { OperationError } from '../../operation.ts';

/*
 * Schemas shared by the three conversation procedures: the wire shapes of the spec.
 */

/** The rules' schemas come from the domain, which also applies them: one home each. */
export { ZSlug, ZTitle } from '@convo/domain';

export const ZUser = z.object({ id: z.number().int(), email: z.string(), name: z.string() }).meta({ id: 'User' });
export const ZTag = z.object({ id: z.number().int(), name: z.string() }).meta({ id: 'Tag' });

export const ZAuthor = z
  .union([
    z.object({ anonymous: z.literal(true) }),
    z.object({ anonymous: z.literal(false), id: z.number().int(), name: z.string(), email: z.string() }),
  ])
  .meta({ id: 'MessageAuthor' });

export const ZMessage = z
  .object({
    id: z.number().int(),
    conversation_id: z.number().int(),
    message_type: z.string(),
    recorded_duration_seconds: z.number().int(),
    author: ZAuthor,
    message_url: z.string().meta({
      description: '`<conversation_url>#message-<id>`: the conversation page, at this message.',
    }),
    embed_message_url: z.string().meta({
      description:
        '`{account_host}/embeds/messages/<account_key>/<id>&show_author=true`: this message alone, for an iframe on any site; the author shows only with show_author=true.',
    }),
    download_media_url: z.string().nullable(),
    text: z.string(),
  })
  .meta({ id: 'Message' });

export const ZWorkflow = z
  .union([z.object({ id: z.number().int(), name: z.string(), steps: z.array(z.unknown()) }), z.strictObject({})])
  .meta({ id: 'Workflow', description: 'The workflow applied at creation, or {} when none applies.' });

const conversationFields = {
  id: z.number().int(),
  title: z.string(),
  slug: z.string(),
  public: z.boolean(),
  via_primary_intake_page: z.boolean(),
  intake_page_id: z.number().int().nullable(),
  conversation_url: z.string().meta({
    description:
      "`{account_host}/c/<slug>`: the conversation's HTML page on the account's own host, served by this server. A private conversation's page answers 404, as a missing one does.",
  }),
  conversation_embed_url: z.string().meta({
    description:
      '`{account_host}/embeds/conversations/<account_key>/<slug>`: the same content without the site around it, for an iframe on any site.',
  }),
  anyone_can_post: z.boolean().meta({
    description: 'True: anyone with the URL may see the conversation. False: private (members only).',
  }),
  allow_anonymous_messages: z.boolean(),
  allow_search_engines: z.boolean().meta({
    description:
      'True, with anyone_can_post: search engines may index the page (robots.txt allows it). Otherwise robots.txt excludes it and the page answers noindex.',
  }),
  tags: z.array(ZTag),
  users: z.array(ZUser),
  messages: z.array(ZMessage),
};

export const ZCreatedConversation = z.object(conversationFields).meta({ id: 'CreatedConversation' });

export const ZListedConversation = z
  .object({ ...conversationFields, workflow: ZWorkflow })
  .meta({ id: 'ListedConversation' });

export const ZConversation = z
  .object({
    ...conversationFields,
    workflow: ZWorkflow,
    conversation_created_time: z.string(),
    conversation_credated_time_nice: z.string(),
  })
  .meta({ id: 'Conversation' });

const PAGE_RULE = `page must be a whole number from 1 to ${MAX_PAGE}`;
export const ZPage = z.number({ error: PAGE_RULE }).int(PAGE_RULE).min(1, PAGE_RULE).max(MAX_PAGE, PAGE_RULE);

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
  workflow: { id: 2, name: 'Support triage', steps: [{ action: 'assign' }] },
};

/** The error a lookup answers when there is nothing to show (its text is the spec's, NO_CONVERSATIONS). */
export const notFound = (description: string): OperationError => ({ description, codes: ['conversation_not_found'] });
