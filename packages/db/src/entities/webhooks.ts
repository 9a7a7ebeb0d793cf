import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './accounts.ts';
import { createdAt } from './columns.ts';

/*
 * Webhooks: endpoints, the events for them, one delivery per event and endpoint, each try.
 */

/** Where an account's events are posted, signed with its secret; disabled after failing too long. */
export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    url: p.string().length(2048),
    secret: p.string().length(100),
    events: p.array().columnType('text[]'),
    createdAt: createdAt(),
    failingSince: p.datetime().columnType('timestamptz(6)').nullable(),
    disabledAt: p.datetime().columnType('timestamptz(6)').nullable(),
  },
  indexes: [
    {
      name: 'webhook_endpoint_account',
      expression:
        'create index "webhook_endpoint_account" on "webhook_endpoint" ("account_id") where "disabled_at" is null',
    },
  ],
});

/** Something that happened, written in the statement that made it happen; dispatched to endpoints later. */
export const WebhookEvent = defineEntity({
  name: 'WebhookEvent',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    type: p.string().length(64),
    conversationId: p.integer(),
    messageId: p.integer().nullable(),
    payload: p.json<Record<string, unknown>>().nullable(),
    createdAt: createdAt(),
    dispatched: p.boolean().default(false),
  },
  indexes: [
    {
      name: 'webhook_event_undispatched',
      expression: 'create index "webhook_event_undispatched" on "webhook_event" ("id") where not "dispatched"',
    },
  ],
});

/** One event to one endpoint: pending until delivered, retried with backoff, in the endpoint's lane. */
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    accountId: p.integer(),
    event: () => p.manyToOne(WebhookEvent).deleteRule('cascade').index('webhook_delivery_event'),
    endpoint: () => p.manyToOne(WebhookEndpoint).deleteRule('cascade'),
    status: p.string().length(16).default('pending'),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
    lastStatus: p.integer().nullable(),
    lastError: p.text().nullable(),
    deliveredAt: p.datetime().columnType('timestamptz(6)').nullable(),
    createdAt: createdAt(),
  },
  indexes: [
    {
      name: 'webhook_delivery_pending',
      expression: `create index "webhook_delivery_pending" on "webhook_delivery" ("id") where "status" = 'pending'`,
    },
    {
      name: 'webhook_delivery_endpoint_pending',
      expression: `create index "webhook_delivery_endpoint_pending" on "webhook_delivery" ("endpoint_id", "id") where "status" = 'pending'`,
    },
  ],
});

/** One try at a delivery: what the endpoint answered and how long it took. */
export const WebhookAttempt = defineEntity({
  name: 'WebhookAttempt',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    delivery: () => p.manyToOne(WebhookDelivery).deleteRule('cascade'),
    at: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
    status: p.integer().nullable(),
    latencyMs: p.integer(),
    error: p.text().nullable(),
  },
  indexes: [
    {
      name: 'webhook_attempt_delivery',
      expression: 'create index "webhook_attempt_delivery" on "webhook_attempt" ("delivery_id", "id")',
    },
  ],
});
