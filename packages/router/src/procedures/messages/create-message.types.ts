import { MAX_MOMENT_SECONDS, ZMessageDetail, ZMessageTemplateId, ZRecordingKind } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, idempotencyDoc, type OperationSpec } from '../../operation.ts';
import { messageDetailExample } from './message.types.ts';

export const ZCreateMessageInput = z
  .object({
    conversation_id: z
      .number()
      .int()
      .min(1)
      .max(2_147_483_647)
      .meta({ description: 'The conversation of this account the message goes into.' }),
    text: z.string().meta({
      description:
        'The message (required unless a template or a recording gives the content). Without markup it is kept as written (the page shows its line breaks and links its web ' +
        'addresses). With markup it may use paragraphs, line breaks, bold, italics, links, lists, quotes and code ' +
        '(`p br b strong i em a ul ol li blockquote code pre`; links http, https and mailto only): everything else is ' +
        'removed (a script with its content, event attributes, `javascript:` links) and a bare web address becomes a ' +
        'link. Up to 10,000 characters.',
    }),
    user_email: z
      .string()
      .max(320)
      .meta({
        description:
          "The author: the account's owner or a member of its team. Absent: the template's creator when a template is " +
          'given, else an anonymous message.',
      }),
    message_template_id: ZMessageTemplateId.meta({
      description:
        'A template of the account: its text replaces `text` (a template without text puts `text` under its recording), ' +
        'and the message keeps its id and name (`message_template`).',
    }),
    internal: z.boolean().meta({
      description:
        "An internal note: only the account's team sees it, on the conversation's page (marked so), in the team's " +
        'inbox and live updates, in mail to the team, in get_messages (`internal: true`) and in `message_created` ' +
        'webhooks (`internal: true`). Never in get_conversation, get_conversations or create_conversation, never on ' +
        'an embed, never to a participant or visitor (its message and media addresses are 404 to them). It moves ' +
        'neither the conversation’s state nor its place in anyone’s list, runs no workflow step and is not searched.',
    }),
    parent_message_id: z
      .number()
      .int()
      .min(1)
      .max(2_147_483_647)
      .meta({
        description:
          'Ours: a message of the same conversation whose thread it replies in, one level deep (a reply to a thread ' +
          'reply joins the same thread; a reply in an internal note’s thread is an internal note). A message of ' +
          'another conversation, a hidden or missing one is 422.',
      }),
    at_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_MOMENT_SECONDS)
      .meta({
        description:
          'Ours: a comment at a moment. A reply in a recording’s thread (`parent_message_id`) may name the moment of ' +
          'that recording it speaks of, in whole seconds from its start; the page marks it on the recording’s ' +
          'timeline and shows "at 1:23" on the reply. Past the recording’s end, or without a recording’s thread, is 422.',
        example: 83,
      }),
    recording_kind: ZRecordingKind,
  })
  .partial({
    text: true,
    user_email: true,
    message_template_id: true,
    internal: true,
    parent_message_id: true,
    at_seconds: true,
    recording_kind: true,
  });

export const createMessageSpec = {
  input: ZCreateMessageInput,
  output: ZMessageDetail,
  queryToo: true,
  meta: {
    successStatus: 201,
    openapi: {
      method: 'POST',
      path: '/messages/create_message',
      summary: 'Post a message into a conversation',
      tags: ['messages'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
      successDescription: 'The message was posted',
    },
  },
  doc: {
    description:
      "Posts a message into one of the account's conversations, as a reply on its page is posted: members who follow " +
      'it are notified, `message_created` webhooks fire, its workflow runs and open pages show it at once; a ' +
      'registered author joins its members. The members may be given as query parameters (as the original service ' +
      'documents them), as a JSON body, or as a form; a recording comes in a multipart/form-data body as the file ' +
      '`recording`, beside the members as fields. Answers the message as get_messages shows it.',
    example: messageDetailExample,
    requestExamples: {
      'application/json': {
        conversation_id: 42,
        text: 'Thanks! Your refund is on its way.',
        user_email: 'olive@acme.example.com',
      },
    },
    ...idempotencyDoc(
      'One header of up to 255 printable ASCII characters other than a comma. A retry with the same key and the ' +
        'same request answers the same message again (201, `Idempotent-Replayed: true`) and posts nothing; the same ' +
        'key with another request is refused with 422 `idempotency_key_reused`. The key is kept with the message, ' +
        'for as long as the message is.',
      'order-1234-reply',
    ),
    errors: {
      ...BODY_ERRORS,
      '404': {
        description: 'No conversation (or message template) of this account has that id',
        codes: ['conversation_not_found', 'message_template_not_found'],
      },
      '413': {
        description: 'The body is over the size limit, or its recording is larger than the server takes',
        codes: ['body_too_large'],
      },
      '422': {
        description:
          'A member is missing or breaks its rule (`Required parameter conversation_id is missing`), the author is not ' +
          "on the account's team, the recording is none the server takes (`recording: …`), or the Idempotency-Key " +
          'was used for another request',
        codes: ['invalid_input', 'idempotency_key_reused'],
      },
      '503': {
        description:
          'The server is measuring too many recordings just now (or the database is unreachable): retry shortly',
        codes: ['recording_busy', 'unavailable', 'timeout'],
      },
    },
  },
} satisfies OperationSpec;
