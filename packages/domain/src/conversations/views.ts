import { z } from 'zod';
import type { ConversationRecord, MessageAuthorRecord, MessageRecord } from '../records.ts';
import { CONVERSATION_SOURCES, CONVERSATION_STATES, MESSAGE_TYPES } from '../records.ts';
import { formatCreatedTime, formatNiceTime } from '../shared/time.ts';
import {
  type AccountAddress,
  conversationEmbedUrl,
  conversationUrl,
  embedMessageUrl,
  mediaUrl,
  messageUrl,
} from '../shared/urls.ts';
import { type WorkflowCopy, ZWorkflowStepState } from '../shared/workflow-steps.ts';

/*
 * The wire shapes of the spec, field names and all, declared once as zod schemas: the API holds
 * every answer to them and publishes them in its OpenAPI document; the types below are what they
 * infer. Which members each operation carries is a rule of the spec: the create response has no
 * creation times and no workflow; the list has the workflow but no creation times; the
 * single-conversation response has both.
 */

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
    message_type: z.enum(MESSAGE_TYPES).meta({
      description:
        '`text`: a typed message. `video`: a camera recording with sound. `screen`: a screen recording (with or without the camera and microphone). `audio`: a microphone recording. A recording may also carry text (a caption), else `text` is "".',
    }),
    recorded_duration_seconds: z.number().int().meta({
      description:
        "The recording's duration as the server measured it from the bytes, rounded to the nearest second (at least 1); 0 for a text message.",
    }),
    author: ZAuthor,
    message_url: z.string().meta({
      description: '`<conversation_url>#message-<id>`: the conversation page, at this message.',
    }),
    embed_message_url: z.string().meta({
      description:
        '`{account_host}/embeds/messages/<account_key>/<id>&show_author=true`: this message alone, for an iframe on any site; the author shows only with show_author=true.',
    }),
    download_media_url: z.string().nullable().meta({
      description:
        "`{account_host}/media/<account_key>/<id>`: the recording's bytes (Range requests answered), stable for the message's life; a private conversation's only for those who may see it or with the account's token. null for a text message.",
    }),
    text: z.string(),
  })
  .meta({ id: 'Message' });

export const ZWorkflow = z
  .union([z.object({ id: z.number().int(), name: z.string(), steps: z.array(ZWorkflowStepState) }), z.strictObject({})])
  .meta({
    id: 'Workflow',
    description:
      "The conversation's copy of the workflow applied at creation (its intake page's, as it was then), each step " +
      'with what it is doing here; {} when none applies.',
  });

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

/**
 * Not in the original service: update_conversation's answer, the conversation as get_conversation
 * answers it followed by the team's triage of it, which none of the spec's answers carry.
 */
export const ZUpdatedConversation = ZConversation.extend({
  state: z.enum(CONVERSATION_STATES).meta({
    description:
      '`open`: waiting on the team; `waiting`: on the other side; `closed`. A message from someone outside the ' +
      'team opens it again (and brings it back from the archive); a reply by the team moves an open one to `waiting`.',
  }),
  source: z.enum(CONVERSATION_SOURCES).meta({
    description:
      'How it began: `api` (create_conversation), `intake` (a visitor on an intake page), `team` (its site).',
  }),
  assignee: ZUser.nullable().meta({ description: 'The team member it is assigned to; null: nobody.' }),
  archived: z.boolean().meta({ description: "True: out of the team's inbox until someone outside the team writes." }),
}).meta({ id: 'UpdatedConversation' });

export const ZConversationList = z.object({ conversations: z.array(ZListedConversation) });

export type UserView = z.infer<typeof ZUser>;
export type TagView = z.infer<typeof ZTag>;
export type AuthorView = z.infer<typeof ZAuthor>;
export type MessageView = z.infer<typeof ZMessage>;
export type WorkflowView = z.infer<typeof ZWorkflow>;
export type CreatedConversationView = z.infer<typeof ZCreatedConversation>;
export type ListedConversationView = z.infer<typeof ZListedConversation>;
export type ConversationView = z.infer<typeof ZConversation>;
export type ConversationListView = z.infer<typeof ZConversationList>;
export type UpdatedConversationView = z.infer<typeof ZUpdatedConversation>;

/** A message's author (or a play's viewer) as the API shows them. */
export const authorView = (a: MessageAuthorRecord): AuthorView =>
  a.anonymous ? { anonymous: true } : { anonymous: false, id: a.id, name: a.name, email: a.email };

export function messageView(a: AccountAddress, conversationId: number, url: string, m: MessageRecord): MessageView {
  const author = authorView(m.author);
  return {
    id: m.id,
    conversation_id: conversationId,
    message_type: m.messageType,
    recorded_duration_seconds: m.recordedDurationSeconds,
    author,
    message_url: messageUrl(url, m.id),
    embed_message_url: embedMessageUrl(a, m.id),
    download_media_url: m.hostedMedia ? mediaUrl(a, m.id) : m.downloadMediaUrl,
    text: m.text,
  };
}

export const workflowView = (w: WorkflowCopy | null): WorkflowView =>
  w === null ? {} : { id: w.id, name: w.name, steps: w.steps };

/** What the create response is built from: a stored conversation, before it has times to show. */
export type CreatedConversationRecord = Omit<ConversationRecord, 'createdAt' | 'workflow'>;

export function createdConversationView(a: AccountAddress, c: CreatedConversationRecord): CreatedConversationView {
  const url = conversationUrl(a, c.slug);
  return {
    id: c.id,
    title: c.title,
    slug: c.slug,
    // `public` mirrors visibility: a conversation is public exactly when anyone with its URL may see it.
    public: c.anyoneCanPost,
    via_primary_intake_page: c.viaPrimaryIntakePage,
    intake_page_id: c.intakePageId,
    conversation_url: url,
    conversation_embed_url: conversationEmbedUrl(a, c.slug),
    anyone_can_post: c.anyoneCanPost,
    allow_anonymous_messages: c.allowAnonymousMessages,
    allow_search_engines: c.allowSearchEngines,
    tags: c.tags.map((t) => ({ id: t.id, name: t.name })),
    users: c.users.map((u) => ({ id: u.id, email: u.email, name: u.name })),
    messages: c.messages.map((m) => messageView(a, c.id, url, m)),
  };
}

export const listedConversationView = (a: AccountAddress, c: ConversationRecord): ListedConversationView => ({
  ...createdConversationView(a, c),
  workflow: workflowView(c.workflow),
});

export const conversationView = (a: AccountAddress, c: ConversationRecord): ConversationView => ({
  ...listedConversationView(a, c),
  conversation_created_time: formatCreatedTime(c.createdAt),
  conversation_credated_time_nice: formatNiceTime(c.createdAt),
});
