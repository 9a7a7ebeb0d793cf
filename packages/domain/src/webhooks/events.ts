import { conversationView, messageView } from '../conversations/views.ts';
import type { ConversationRecord, MessageRecord } from '../records.ts';
import { type AccountAddress, conversationUrl } from '../shared/urls.ts';

/** What an endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'conversation_created',
  'conversation_updated',
  'conversation_deleted',
  'message_created',
  'message_hidden',
  'message_played',
  'reaction_added',
  'message_transcribed',
  'workflow_step',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (t: string): t is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);

/**
 * When a failed delivery is tried again, after its first attempt: 5 s, 30 s, 2 min, 10 min, 30 min,
 * 1 h, 2 h, 4 h, then 8 h four times (each ±20%): 13 attempts in all over about 40 hours; then it is failed.
 */
export const WEBHOOK_RETRY_SECONDS = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800, 28_800, 28_800];

/** The delay before the attempt after `attempts` made, or null when the delivery has had its last. */
export function webhookRetryDelaySeconds(attempts: number, random = Math.random()): number | null {
  const base = WEBHOOK_RETRY_SECONDS[attempts - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.8 + 0.4 * random));
}

/** An endpoint failing every delivery this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_SECONDS = 3 * 24 * 3600;

/** The body every delivery carries (the Standard Webhooks envelope: type, timestamp, data). */
export interface WebhookEnvelope {
  type: WebhookEventType;
  timestamp: string;
  data: unknown;
}

/**
 * conversation_created, conversation_updated: the conversation as get_conversation returns it (as
 * it is when the event is first sent).
 */
export function conversationPayload(
  type: 'conversation_created' | 'conversation_updated',
  a: AccountAddress,
  c: ConversationRecord,
  at: Date,
): WebhookEnvelope {
  return { type, timestamp: at.toISOString(), data: conversationView(a, c) };
}

/**
 * message_created: the message as it appears in `messages`, with its conversation's id and slug,
 * whether it is an internal note (the team's alone), the thread it replies in, and its moment of
 * the thread's recording (at_seconds).
 */
export function messageCreatedPayload(
  a: AccountAddress,
  conversation: { id: number; slug: string },
  m: MessageRecord & { internal: boolean; parentId: number | null; atSeconds: number | null },
  at: Date,
): WebhookEnvelope {
  return {
    type: 'message_created',
    timestamp: at.toISOString(),
    data: {
      conversation: { id: conversation.id, slug: conversation.slug },
      message: messageView(a, conversation.id, conversationUrl(a, conversation.slug), m),
      internal: m.internal,
      parent_message_id: m.parentId,
      at_seconds: m.atSeconds,
    },
  };
}
