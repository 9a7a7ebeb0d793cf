import type { ConversationRecord, MessageRecord, WorkflowRecord } from './ports.ts';
import { formatCreatedTime, formatNiceTime } from './time.ts';
import { type AccountAddress, conversationEmbedUrl, conversationUrl, embedMessageUrl, messageUrl } from './urls.ts';

/*
 * The wire shapes of the spec, field names and all. Which members each operation carries is a
 * rule of the spec: the create response has no creation times and no workflow; the list has the
 * workflow but no creation times; the single-conversation response has both.
 */

export interface UserView {
  id: number;
  email: string;
  name: string;
}

export interface TagView {
  id: number;
  name: string;
}

export type AuthorView = { anonymous: true } | { anonymous: false; id: number; name: string; email: string };

export interface MessageView {
  id: number;
  conversation_id: number;
  message_type: string;
  recorded_duration_seconds: number;
  author: AuthorView;
  message_url: string;
  embed_message_url: string;
  download_media_url: string | null;
  text: string;
}

export type WorkflowView = Record<string, never> | { id: number; name: string; steps: unknown[] };

export interface CreatedConversationView {
  id: number;
  title: string;
  slug: string;
  public: boolean;
  via_primary_intake_page: boolean;
  intake_page_id: number | null;
  conversation_url: string;
  conversation_embed_url: string;
  anyone_can_post: boolean;
  allow_anonymous_messages: boolean;
  allow_search_engines: boolean;
  tags: TagView[];
  users: UserView[];
  messages: MessageView[];
}

export interface ListedConversationView extends CreatedConversationView {
  workflow: WorkflowView;
}

export interface ConversationView extends ListedConversationView {
  conversation_created_time: string;
  conversation_credated_time_nice: string;
}

export interface ConversationListView {
  conversations: ListedConversationView[];
}

export function messageView(a: AccountAddress, conversationId: number, url: string, m: MessageRecord): MessageView {
  const author: AuthorView = m.author.anonymous
    ? { anonymous: true }
    : { anonymous: false, id: m.author.id, name: m.author.name, email: m.author.email };
  return {
    id: m.id,
    conversation_id: conversationId,
    message_type: m.messageType,
    recorded_duration_seconds: m.recordedDurationSeconds,
    author,
    message_url: messageUrl(url, m.id),
    embed_message_url: embedMessageUrl(a, m.id),
    download_media_url: m.downloadMediaUrl,
    text: m.text,
  };
}

export const workflowView = (w: WorkflowRecord | null): WorkflowView =>
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
