import { idempotencyKeyProblem } from '../conversations/create-conversation.ts';
import { momentApiText, momentProblem } from '../conversations/moments.ts';
import type { UpdateConversationStore } from '../conversations/ports.ts';
import { replyThread } from '../conversations/threads.ts';
import { withReceivedRecording } from '../media/measure-recording.ts';
import type { MediaDeps, MediaKind, StoredMedia } from '../media/media.ts';
import type { ReceivedFile } from '../media/uploads.ts';
import { messageBody } from '../people/message-text.ts';
import type { ReplyStore } from '../people/ports.ts';
import type { AccountContext, MessageFormat, TemplateRef } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { WireJson } from '../shared/wire-json.ts';
import type { MessageStore } from './ports.ts';
import { fromTemplate, type MessageTemplateStore } from './templates.ts';
import type { MessageDetailView } from './views.ts';

/** What create_message is asked (the API's members, as the procedure read them). */
export interface CreateMessageInput {
  conversationId: number;
  text?: string | undefined;
  /** The author: the account's owner or a team member; absent, the template's creator, else anonymous. */
  userEmail?: string | undefined;
  /** A template of the account whose content the message takes. */
  messageTemplateId?: number | undefined;
  /** An internal note: only the account's team sees it (never the spec'd operations). */
  internal?: boolean | undefined;
  /** A message of the conversation whose thread it replies in (a thread reply's: the same thread). */
  parentMessageId?: number | undefined;
  /** The moment of the thread's recording it comments on (whole seconds): a reply in a recording's thread only. */
  atSeconds?: number | undefined;
  /** A recording that came with it (REST's multipart `recording`), kept but not measured yet. */
  recording?: ReceivedFile | undefined;
  /** Of a recording with video: a screen recording, not a camera's (the bytes decide video or audio). */
  recordingKind?: MediaKind | undefined;
}

/** The message's own key among the account's form tokens: `api:` and the key's SHA-256 (64 characters at most). */
async function submitKeyOf(idempotencyKey: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(idempotencyKey)));
  return `api:${Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')}`.slice(0, 64);
}

/**
 * create_message: posts a message into one of the account's conversations, by the same statement
 * as a reply on its page (so webhooks, notifications, workflows, the live streams and membership
 * follow as they do for one), and answers it as get_messages shows it. Its author is a person of
 * the account's team, or nobody (anonymous). With an Idempotency-Key, a retry of the same request
 * answers the same message again (`replayed`) and posts nothing; the same key for another
 * request is refused. The key is kept with the message, as long as the message is. A template
 * gives its content (templates.ts) and, unless an author is named, its creator as the author.
 */
export async function createMessage(
  deps: CreateMessageDeps,
  account: AccountContext,
  input: CreateMessageInput,
  options: { idempotencyKey?: string | undefined } = {},
): Promise<{ view: WireJson<MessageDetailView>; replayed: boolean }> {
  return withReceivedRecording(deps.media, input.recording, input.recordingKind, (media, kept) =>
    post(deps, account, input, media, options, kept),
  );
}

/** What create_message reads and writes through. */
export interface CreateMessageDeps {
  messageStore: MessageStore;
  messageTemplates: MessageTemplateStore;
  replies: ReplyStore;
  updateConversationStore: UpdateConversationStore;
  /** Where a recording that came with the message is measured and kept. */
  media: MediaDeps;
}

/**
 * The message written, with `media` when a recording came (`written`: told once a new row holds
 * it; a retry's recording is a second copy, the first request's message keeps its own).
 */
async function post(
  deps: CreateMessageDeps,
  account: AccountContext,
  input: CreateMessageInput,
  media: StoredMedia | undefined,
  options: { idempotencyKey?: string | undefined },
  written?: () => void,
): Promise<{ view: WireJson<MessageDetailView>; replayed: boolean }> {
  const key = options.idempotencyKey;
  const keyProblem = key === undefined ? null : idempotencyKeyProblem(key);
  if (keyProblem) throw new DomainError('invalid_input', keyProblem);
  let content: { text: string; format: MessageFormat; media?: StoredMedia | undefined; template?: TemplateRef };
  let authorId: number | null = null;
  if (input.messageTemplateId !== undefined) {
    const template = await deps.messageTemplates.find(account.id, input.messageTemplateId);
    if (!template) throw new DomainError('message_template_not_found');
    content = fromTemplate(template, input.text);
    authorId = template.creator?.id ?? null;
    if (media && content.media) {
      throw new DomainError('invalid_input', 'recording: the template brings its own recording');
    }
  } else if (media && (input.text === undefined || input.text.trim() === '')) {
    content = { text: '', format: 'text' };
  } else if (input.text === undefined) {
    throw new DomainError('invalid_input', 'Required parameter text is missing');
  } else {
    content = messageBody(input.text);
  }
  if (input.userEmail !== undefined) {
    authorId = await deps.updateConversationStore.teamMemberId(account.id, input.userEmail);
    if (authorId === null) {
      throw new DomainError(
        'invalid_input',
        `user_email: ${input.userEmail} is not the account's owner or a member of its team`,
      );
    }
  }
  const thread = await replyThread(deps.replies, account.id, input.conversationId, input.parentMessageId, 'account');
  if (!thread) {
    throw new DomainError(
      'invalid_input',
      `parent_message_id: no message ${input.parentMessageId} in conversation ${input.conversationId}`,
    );
  }
  const moment = momentProblem(input.atSeconds, thread);
  if (moment) throw new DomainError('invalid_input', momentApiText(moment));
  const submitKey = key === undefined ? null : await submitKeyOf(key);
  const row = await deps.replies.insert(account.id, input.conversationId, {
    authorId,
    text: content.text,
    format: content.format,
    media: media ?? content.media,
    template: content.template,
    internal: input.internal === true || thread.internal,
    parentId: thread.parentId,
    atSeconds: input.atSeconds ?? null,
    submitKey,
    answerAs: account,
  });
  // The insert reads the conversation itself: another account's or none writes nothing.
  if (!row) throw new DomainError('conversation_not_found');
  if (row.created) written?.();
  const { id, created, detail } = row;
  // Written now: the statement answered the message as it wrote it.
  if (created && detail !== null) return { view: { text: detail }, replayed: false };
  if (!created) {
    const first = await deps.messageStore.posted(account.id, id);
    const same =
      first?.conversationId === input.conversationId && first.authorId === authorId && first.text === content.text;
    if (!same) throw new DomainError('idempotency_key_reused');
  }
  const view = await deps.messageStore.one(account, id);
  // Hidden by the team between the post and this read: as if it were not there.
  if (!view) throw new DomainError('message_not_found');
  return { view, replayed: !created };
}
