import { DomainError } from '../errors.ts';
import type { AccountContext, WebhookEndpointRecord, WebhookEndpointStore, WebhookTargets } from '../ports.ts';
import { generateWebhookSecret } from '../tokens.ts';
import type { WebhookEventType } from '../webhooks.ts';

/*
 * An account's webhook subscriptions, as its API clients manage them (REST-hook style: an
 * automation platform subscribes when a user turns a trigger on and deletes the subscription when
 * it is turned off). Operators do the same from the CLI through these same rules.
 */

/** How many endpoints one account may have. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

export const WEBHOOK_NOT_FOUND = 'no webhook endpoint with this id in this account';
export const WEBHOOK_LIMIT_REACHED = `an account may have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`;

export interface WebhookEndpointView {
  id: number;
  url: string;
  events: WebhookEventType[];
  /** active; failing (deliveries failing since failing_since); disabled (failing for 3 days). */
  status: 'active' | 'failing' | 'disabled';
  created_at: string;
  failing_since: string | null;
  disabled_at: string | null;
  pending_deliveries: number;
}

/** The view of a new endpoint: the only time its signing secret is shown. */
export interface SubscribedWebhookView extends WebhookEndpointView {
  secret: string;
}

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

/** Subscribes an endpoint to events; its address is checked first (no private targets). */
export async function subscribeWebhook(
  services: WebhookEndpointServices,
  account: Pick<AccountContext, 'id'>,
  /** `secret`: only an operator's seed file brings its own; otherwise one is made. */
  input: { url: string; events: readonly WebhookEventType[]; secret?: string },
): Promise<SubscribedWebhookView> {
  const events = [...new Set(input.events)];
  if (events.length === 0) throw new DomainError('invalid_input', 'events: name at least one event');
  const target = await services.webhookTargets.check(input.url);
  if (!target.ok) throw new DomainError('webhook_target_refused', target.reason);
  const secret = input.secret ?? generateWebhookSecret();
  const stored = await services.webhookEndpoints.add(
    account.id,
    { url: target.url, events, secret },
    MAX_WEBHOOK_ENDPOINTS,
  );
  if (!stored) throw new DomainError('webhook_limit_reached', WEBHOOK_LIMIT_REACHED);
  return { ...webhookEndpointView(stored), secret };
}

export async function listWebhookEndpoints(
  services: WebhookEndpointServices,
  account: Pick<AccountContext, 'id'>,
): Promise<WebhookEndpointView[]> {
  return (await services.webhookEndpoints.list(account.id)).map(webhookEndpointView);
}

/** Unsubscribes; another account's endpoint is answered exactly as one that never existed. */
export async function unsubscribeWebhook(
  services: WebhookEndpointServices,
  account: Pick<AccountContext, 'id'>,
  id: number,
): Promise<void> {
  if (!(await services.webhookEndpoints.remove(account.id, id))) {
    throw new DomainError('webhook_not_found', WEBHOOK_NOT_FOUND);
  }
}
