import type { Actor } from '../conversations/access.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import {
  type MessageTemplateInput,
  type MessageTemplateStore,
  type MessageTemplateView,
  messageTemplateView,
  requireTemplateKeeper,
  savedTemplate,
  templateDraft,
} from './templates.ts';

/** Changes what is given of a template; messages made from it keep what they got. */
export async function updateMessageTemplate(
  deps: { messageTemplates: MessageTemplateStore },
  account: Pick<AccountContext, 'id'>,
  id: number,
  input: MessageTemplateInput,
  actor: Actor,
): Promise<MessageTemplateView> {
  requireTemplateKeeper(actor);
  const current = await deps.messageTemplates.find(account.id, id);
  if (!current) throw new DomainError('message_template_not_found');
  const draft = templateDraft(input, current, null);
  return messageTemplateView(savedTemplate(await deps.messageTemplates.change(account.id, id, draft)));
}
