import type { AccountContext } from '../records.ts';
import { type MessageTemplateStore, type MessageTemplateView, messageTemplateView } from './templates.ts';

/** The account's message templates, by name: what anyone on its team may use. */
export async function listMessageTemplates(
  deps: { messageTemplates: MessageTemplateStore },
  account: Pick<AccountContext, 'id'>,
): Promise<{ message_templates: MessageTemplateView[] }> {
  return { message_templates: (await deps.messageTemplates.list(account.id)).map(messageTemplateView) };
}
