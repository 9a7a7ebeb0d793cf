import type { AccountContext } from '../records.ts';
import type { WebhookEndpointServices, WebhookEndpointView } from './webhook-endpoints.ts';
import { webhookEndpointView } from './webhook-endpoints.ts';

export async function listWebhooks(
  services: WebhookEndpointServices,
  account: Pick<AccountContext, 'id'>,
): Promise<WebhookEndpointView[]> {
  return (await services.webhookEndpoints.list(account.id)).map(webhookEndpointView);
}
