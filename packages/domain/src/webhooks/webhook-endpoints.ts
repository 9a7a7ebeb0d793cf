import { z } from 'zod';

import { WEBHOOK_EVENT_TYPES } from './events.ts';

import type { WebhookEndpointRecord, WebhookEndpointStore, WebhookTargets } from './ports.ts';

/*
 * An account's webhook subscriptions, as its API clients manage them (REST-hook style: an
 * automation platform subscribes when a user turns a trigger on and deletes the subscription when
 * it is turned off). Operators do the same from the CLI through these same rules.
 */

export const ZWebhookEventType = z.enum(WEBHOOK_EVENT_TYPES).meta({
  id: 'WebhookEventType',
  description:
    '`conversation_created`: the conversation as get_conversation returns it. `conversation_updated`: the same, ' +
    'after update_conversation (or the team on its page) renamed it or changed its settings or triage. ' +
    '`conversation_deleted`: `{conversation: {id}}`, after delete_conversation (or the team) deleted it. ' +
    '`message_created`: the message ' +
    'as it appears in `messages`, with its conversation’s `id` and `slug`, and `internal` (true for an internal ' +
    'note, which only the team sees: it is in no spec’d operation, and nowhere a participant looks) and ' +
    '`parent_message_id` (the message whose thread it replies in, or null) and `at_seconds` (its moment of that ' +
    'thread’s recording, whole seconds, or null). `message_hidden`: the ids of a message ' +
    'the team hid. `message_played`: a recording was played past its receipt threshold (5 s or 75 %), once per ' +
    "viewer and session and never by its own side: `message_id`, `conversation_id`, the `viewer` (as a message's " +
    '`author` is shown: a person, or `{"anonymous": true}`) and `played_at`. `reaction_added`: someone reacted on ' +
    'a message (its page, or add_reaction), once per message, kind and person: `message_id`, `conversation_id`, ' +
    '`reaction` and its `emoji`, the `user` (a person, or `{"anonymous": true}`) and `created_at`. ' +
    '`message_transcribed`: the speech engine made a recording’s transcript, once per message that carries it ' +
    '(internal notes aside): `message_id`, `conversation_id` and the `transcript` as get_messages shows it. `workflow_step`: a workflow step whose action is `webhook` ran: the conversation’s `id` and ' +
    '`slug`, the workflow’s `id` and `name`, the step’s position (`step`, from 0), `trigger`, `action`, and the ' +
    'message it answers (`message_id`, or null).',
});

export const ZWebhookId = z.number().int().min(1).max(2_147_483_647);

export const ZWebhookEndpoint = z
  .object({
    id: ZWebhookId,
    url: z.string(),
    events: z.array(ZWebhookEventType),
    status: z.enum(['active', 'failing', 'disabled']).meta({
      description:
        '`failing`: its deliveries have failed since `failing_since` (they are retried for about 40 hours); ' +
        '`disabled`: failing for 3 days, so nothing more is sent to it. Subscribe again to start over.',
    }),
    created_at: z.string().meta({ description: 'ISO 8601, UTC.' }),
    failing_since: z.string().nullable(),
    disabled_at: z.string().nullable(),
    pending_deliveries: z.number().int().meta({ description: 'Deliveries waiting for their next attempt.' }),
  })
  .meta({ id: 'WebhookEndpoint' });

/** A new endpoint: the only time its signing secret is shown. */
export const ZSubscribedWebhook = ZWebhookEndpoint.extend({
  secret: z.string().meta({
    description:
      'The Standard Webhooks signing secret (`whsec_…`). Shown only in this answer: keep it to verify the ' +
      '`webhook-signature` header of each delivery.',
  }),
}).meta({ id: 'SubscribedWebhook' });

export type WebhookEndpointView = z.infer<typeof ZWebhookEndpoint>;

export type SubscribedWebhookView = z.infer<typeof ZSubscribedWebhook>;

export interface WebhookEndpointServices {
  webhookEndpoints: WebhookEndpointStore;
  webhookTargets: WebhookTargets;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const webhookEndpointView = (r: WebhookEndpointRecord): WebhookEndpointView => ({
  id: r.id,
  url: r.url,
  events: r.events,
  status: r.disabledAt ? 'disabled' : r.failingSince ? 'failing' : 'active',
  created_at: r.createdAt.toISOString(),
  failing_since: iso(r.failingSince),
  disabled_at: iso(r.disabledAt),
  pending_deliveries: r.pending,
});
