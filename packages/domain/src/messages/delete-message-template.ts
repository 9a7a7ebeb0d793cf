import type { Actor } from '../conversations/access.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { type MessageTemplateStore, requireTemplateKeeper } from './templates.ts';

/**
 * Takes a template out of the library. Messages made from it stay as they are (their
 * `message_template` keeps its id and name); its recording stays while a message holds it.
 */
export async function deleteMessageTemplate(
  deps: { messageTemplates: MessageTemplateStore },
  account: Pick<AccountContext, 'id'>,
  id: number,
  actor: Actor,
): Promise<void> {
  requireTemplateKeeper(actor);
  if (!(await deps.messageTemplates.remove(account.id, id))) throw new DomainError('message_template_not_found');
}
