import type { Actor } from '../conversations/access.ts';
import { withReceivedRecording } from '../media/measure-recording.ts';
import type { MediaDeps } from '../media/media.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
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

/** Changes what is given of a template; messages made from it keep what they got. */
export async function updateMessageTemplate(
  deps: { messageTemplates: MessageTemplateStore; media: MediaDeps },
  account: Pick<AccountContext, 'id'>,
  id: number,
  input: MessageTemplateInput,
  actor: Actor,
  recording: TemplateRecording = {},
): Promise<MessageTemplateView> {
  requireTemplateKeeper(actor);
  return withReceivedRecording(deps.media, recording.file, recording.kind, async (media, kept) => {
    const current = await deps.messageTemplates.find(account.id, id);
    if (!current) throw new DomainError('message_template_not_found');
    const draft = templateDraft(input, current, null, media);
    const saved = savedTemplate(await deps.messageTemplates.change(account.id, id, draft));
    kept();
    return messageTemplateView(saved);
  });
}
