import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { MAX_WEBHOOK_ENDPOINTS } from '../shared/limits.ts';
import { generateWebhookSecret } from '../shared/tokens.ts';
import type { WebhookEventType } from './events.ts';
import type { SubscribedWebhookView, WebhookEndpointServices } from './webhook-endpoints.ts';
import { webhookEndpointView } from './webhook-endpoints.ts';

/** Subscribes an endpoint to events; its address is checked first (no private targets). */
export async function createWebhook(
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
  if (!stored) throw new DomainError('webhook_limit_reached');
  return { ...webhookEndpointView(stored), secret };
}
