import type { Actor } from '../conversations/access.ts';
import { withReceivedRecording } from '../media/measure-recording.ts';
import type { MediaDeps } from '../media/media.ts';
import type { AccountContext, UserRecord } from '../records.ts';
import { MAX_MESSAGE_TEMPLATES } from '../shared/limits.ts';
import {
  type MessageTemplateInput,
  type MessageTemplateStore,
  type MessageTemplateView,
  messageTemplateView,
  requireTemplateKeeper,
  savedTemplate,
  type TemplateRecording,
  templateDraft,
} from './templates.ts';

/**
 * Adds a template to the account's library. Its creator is the person saving it, or (the
 * account's token, the CLI) the account's owner.
 */
export async function createMessageTemplate(
  deps: { messageTemplates: MessageTemplateStore; media: MediaDeps },
  account: Pick<AccountContext, 'id'> & { owner?: Pick<UserRecord, 'id'> | null },
  input: MessageTemplateInput,
  actor: Actor,
  recording: TemplateRecording = {},
): Promise<MessageTemplateView> {
  requireTemplateKeeper(actor);
  const creatorId = actor === 'account' ? (account.owner?.id ?? null) : (actor?.userId ?? null);
  return withReceivedRecording(deps.media, recording.file, recording.kind, async (media, kept) => {
    const draft = templateDraft(input, null, creatorId, media);
    const saved = savedTemplate(await deps.messageTemplates.create(account.id, draft, MAX_MESSAGE_TEMPLATES));
    kept();
    return messageTemplateView(saved);
  });
}
