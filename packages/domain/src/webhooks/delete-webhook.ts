import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { WebhookEndpointServices } from './webhook-endpoints.ts';

/** Unsubscribes; another account's endpoint is answered exactly as one that never existed. */
export async function deleteWebhook(
  services: WebhookEndpointServices,
  account: Pick<AccountContext, 'id'>,
  id: number,
): Promise<void> {
  if (!(await services.webhookEndpoints.remove(account.id, id))) {
    throw new DomainError('webhook_not_found');
  }
}
