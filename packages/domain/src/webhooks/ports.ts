import type { WebhookEventType } from './events.ts';

/* The ports of the webhooks area: an account's endpoints, and the policy for their addresses. */

/** An account's webhook endpoint, as its subscribers see it. */
export interface WebhookEndpointRecord {
  id: number;
  url: string;
  events: WebhookEventType[];
  createdAt: Date;
  /** When its deliveries began failing without a success since; null when they succeed. */
  failingSince: Date | null;
  /** When it was disabled for failing too long; null while it is enabled. */
  disabledAt: Date | null;
  /** Deliveries waiting for their next attempt. */
  pending: number;
}

export interface WebhookEndpointStore {
  /**
   * Stores a new endpoint, unless the account already has `max` of them (then null); the check
   * and the insert are one step, so concurrent subscriptions cannot pass the limit together.
   */
  add(
    accountId: number,
    endpoint: { url: string; events: WebhookEventType[]; secret: string },
    max: number,
  ): Promise<WebhookEndpointRecord | null>;
  list(accountId: number): Promise<WebhookEndpointRecord[]>;
  /** Deletes the endpoint and its pending deliveries; false when the account has no such endpoint. */
  remove(accountId: number, id: number): Promise<boolean>;
}

/** Where a webhook may be sent: the transport's network policy (schemes, addresses) decides. */
export interface WebhookTargets {
  /** The URL as it will be stored, or why it is refused (not https, resolves to a private address…). */
  check(url: string): Promise<{ ok: true; url: string } | { ok: false; reason: string }>;
}
