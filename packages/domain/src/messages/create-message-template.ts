import type { Actor } from '../conversations/access.ts';
import type { AccountContext, UserRecord } from '../records.ts';
import { MAX_MESSAGE_TEMPLATES } from '../shared/limits.ts';
import {
  type MessageTemplateInput,
  type MessageTemplateStore,
  type MessageTemplateView,
  messageTemplateView,
  requireTemplateKeeper,
  savedTemplate,
  templateDraft,
} from './templates.ts';

/**
 * Adds a template to the account's library. Its creator is the person saving it, or (the
 * account's token, the CLI) the account's owner.
 */
export async function createMessageTemplate(
  deps: { messageTemplates: MessageTemplateStore },
  account: Pick<AccountContext, 'id'> & { owner?: Pick<UserRecord, 'id'> | null },
  input: MessageTemplateInput,
  actor: Actor,
): Promise<MessageTemplateView> {
  requireTemplateKeeper(actor);
  const creatorId = actor === 'account' ? (account.owner?.id ?? null) : (actor?.userId ?? null);
  const draft = templateDraft(input, null, creatorId);
  return messageTemplateView(
    savedTemplate(await deps.messageTemplates.create(account.id, draft, MAX_MESSAGE_TEMPLATES)),
  );
}
