import { z } from 'zod';
import { type Actor, managesIntake, type Viewer } from '../conversations/access.ts';
import type { MediaKind, StoredMedia } from '../media/media.ts';
import type { ReceivedFile } from '../media/uploads.ts';
import { messageBody } from '../people/message-text.ts';
import type { MessageFormat, TemplateRef } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { ZText } from '../shared/text.ts';

/*
 * The team's library of reusable messages: a name, a text (the API's text: as written, or the
 * safe subset of HTML), a recording (taken from a message of the account), and who made it. A
 * message made from one (create_message's `message_template_id`, the reply form's picker, a
 * workflow's post_message step) takes its text, or puts the text it was given under the
 * template's recording when the template has no text, and keeps the template's id and name as
 * they were: deleting or renaming a template leaves the messages made from it as they are.
 * Owners and admins (and the account's token) keep the library; everyone on the team uses it.
 */

export const ZMessageTemplateId = z.number().int().min(1).max(2_147_483_647);

/** What the team sets on a template; every member optional on a change. */
export const messageTemplateFields = {
  name: ZText('name')
    .pipe(z.string().trim().min(1).max(255))
    .meta({ description: 'How the team finds it (unique in the account, ignoring case).' }),
  text: z.string().meta({
    description:
      'Its message, under the rules of create_message’s `text` (plain, or the safe subset of HTML). Empty: a ' +
      'template of its recording alone, under which a message made from it puts the text it is given.',
  }),
  recording_message_id: z
    .number()
    .int()
    .min(1)
    .max(2_147_483_647)
    .nullable()
    .meta({
      description:
        'A message of the account (not hidden) whose recording, kept by this server, the template keeps; null for ' +
        'none. The template keeps the recording even when that message is deleted.',
    }),
};

export const ZMessageTemplate = z
  .object({
    id: ZMessageTemplateId,
    name: z.string(),
    text: z.string().meta({ description: 'As kept: as written, or the safe subset of HTML.' }),
    recording: z
      .object({
        message_type: z.enum(['video', 'screen', 'audio']),
        recorded_duration_seconds: z.number().int(),
      })
      .nullable()
      .meta({ description: 'The recording a message made from it carries; null for none.' }),
    creator: z
      .object({ id: z.number().int(), name: z.string(), email: z.string() })
      .nullable()
      .meta({ description: 'Who made it: messages made from it are theirs. Null once they left the team.' }),
    created_at: z.string().meta({ description: 'ISO 8601, UTC.' }),
    updated_at: z.string().meta({ description: 'ISO 8601, UTC.' }),
  })
  .meta({ id: 'MessageTemplate' });

export type MessageTemplateView = z.infer<typeof ZMessageTemplate>;

/** A template as stored. */
export interface MessageTemplateRecord {
  id: number;
  name: string;
  text: string;
  format: MessageFormat;
  media: StoredMedia | null;
  creator: { id: number; name: string; email: string } | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A template as saved: every member given. */
export interface MessageTemplateDraft {
  name: string;
  text: string;
  format: MessageFormat;
  /** The message whose recording it takes now; null: none; undefined: the one it has (or `media`). */
  recordingMessageId: number | null | undefined;
  /** A recording that came with the request (measured, in the store): it takes this one. */
  media?: StoredMedia | undefined;
  creatorId: number | null;
}

export type MessageTemplateWrite =
  | { kind: 'saved'; template: MessageTemplateRecord }
  | { kind: 'name_taken' | 'limit' | 'not_found' | 'no_recording' };

export interface MessageTemplateStore {
  /** The account's templates, by name. */
  list(accountId: number): Promise<MessageTemplateRecord[]>;
  find(accountId: number, id: number): Promise<MessageTemplateRecord | null>;
  /** Stores a template unless the account has `max` or the name is taken. */
  create(accountId: number, draft: MessageTemplateDraft, max: number): Promise<MessageTemplateWrite>;
  change(accountId: number, id: number, draft: MessageTemplateDraft): Promise<MessageTemplateWrite>;
  /** False when the account has no such template. */
  remove(accountId: number, id: number): Promise<boolean>;
}

export interface MessageTemplateInput {
  name?: string | undefined;
  text?: string | undefined;
  recording_message_id?: number | null | undefined;
}

/** A recording sent with a template's save (REST's multipart `recording`, the site's file input), not measured yet. */
export interface TemplateRecording {
  file?: ReceivedFile | undefined;
  kind?: MediaKind | undefined;
}

/** A template's fields as a form sent them (the team's site), by the schema the API publishes. */
export function parseMessageTemplateInput(input: Record<string, unknown>): MessageTemplateInput {
  const parsed = z.object(messageTemplateFields).partial().safeParse(input);
  if (!parsed.success) throw new DomainError('invalid_input', z.prettifyError(parsed.error).replaceAll('\n', ' '));
  return parsed.data;
}

/** The refusal of a person who may not keep the library. */
export function requireTemplateKeeper(actor: Actor): void {
  if (actor !== 'account' && !managesIntake(actor)) {
    throw new DomainError('forbidden', 'only the account’s owners and admins keep its message templates');
  }
}

/** The draft of a create (current null) or a change. */
export function templateDraft(
  input: MessageTemplateInput,
  current: MessageTemplateRecord | null,
  creatorId: number | null,
  media?: StoredMedia,
): MessageTemplateDraft {
  const name = input.name?.trim() ?? current?.name;
  if (!name) throw new DomainError('invalid_input', 'name: give the template a name');
  const recordingMessageId = input.recording_message_id;
  if (media && recordingMessageId !== undefined) {
    throw new DomainError('invalid_input', 'recording: send a recording or name recording_message_id, not both');
  }
  const hasRecording =
    media !== undefined || (recordingMessageId === undefined ? current?.media != null : recordingMessageId !== null);
  let body: { text: string; format: MessageFormat };
  if (input.text === undefined)
    body = current ? { text: current.text, format: current.format } : { text: '', format: 'text' };
  else if (input.text.trim() === '') body = { text: '', format: 'text' };
  else body = messageBody(input.text);
  if (body.text === '' && !hasRecording) {
    throw new DomainError('invalid_input', 'text: a template without a recording needs a text');
  }
  return {
    name,
    text: body.text,
    format: body.format,
    recordingMessageId,
    media,
    creatorId: current?.creator?.id ?? creatorId,
  };
}

/** A store's write as the use cases answer it, or its refusal. */
export function savedTemplate(write: MessageTemplateWrite): MessageTemplateRecord {
  switch (write.kind) {
    case 'saved':
      return write.template;
    case 'name_taken':
      throw new DomainError('message_template_name_taken');
    case 'limit':
      throw new DomainError('message_template_limit_reached');
    case 'not_found':
      throw new DomainError('message_template_not_found');
    case 'no_recording':
      throw new DomainError(
        'invalid_input',
        'recording_message_id: no message of this account has a recording kept here',
      );
  }
}

export const messageTemplateView = (t: MessageTemplateRecord): MessageTemplateView => ({
  id: t.id,
  name: t.name,
  text: t.text,
  recording: t.media ? { message_type: t.media.kind, recorded_duration_seconds: t.media.seconds } : null,
  creator: t.creator,
  created_at: t.createdAt.toISOString(),
  updated_at: t.updatedAt.toISOString(),
});

/**
 * What a message made from `template` carries, given the text it was asked with: the template's
 * text, or (a template of a recording alone) the text given under its recording.
 */
export function fromTemplate(
  template: MessageTemplateRecord,
  givenText: string | undefined,
): { text: string; format: MessageFormat; media: StoredMedia | undefined; template: TemplateRef } {
  const body =
    template.text !== ''
      ? { text: template.text, format: template.format }
      : givenText === undefined || givenText.trim() === ''
        ? { text: '', format: 'text' as const }
        : messageBody(givenText);
  return { ...body, media: template.media ?? undefined, template: { id: template.id, name: template.name } };
}

/**
 * The library as a conversation's reply form offers it: to anyone on the account's team; to
 * anyone else there is none.
 */
export async function templatesForReply(
  deps: { messageTemplates: MessageTemplateStore },
  accountId: number,
  viewer: Viewer,
): Promise<MessageTemplateRecord[]> {
  return viewer?.teamRole ? deps.messageTemplates.list(accountId) : [];
}

/** One template of the library for a reply, as templatesForReply offers it; null when it is not offered. */
export async function templateForReply(
  deps: { messageTemplates: MessageTemplateStore },
  accountId: number,
  viewer: Viewer,
  id: number,
): Promise<MessageTemplateRecord | null> {
  return viewer?.teamRole ? deps.messageTemplates.find(accountId, id) : null;
}

/** What a reply made from a template carries beside the text written: the template's recording and name. */
export const replyTemplateOf = (t: MessageTemplateRecord) => ({
  ref: { id: t.id, name: t.name },
  media: t.media,
});
