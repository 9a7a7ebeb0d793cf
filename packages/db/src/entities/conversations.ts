import {
  CONVERSATION_SOURCES,
  CONVERSATION_STATES,
  MESSAGE_FORMATS,
  SLUG_KEY_SQL,
  type WorkflowCopy,
} from '@convo/domain';
import { defineEntity, p } from '@mikro-orm/core';
import { Account, User } from './accounts.ts';
import { createdAt, liveTrigger } from './columns.ts';

/*
 * Conversations, their members, tags and messages, and the intake pages (with the workflow each
 * copies onto what it starts) that start them: an intake page welcomes with a message and a
 * conversation remembers its intake page, so the two point at each other and share this file.
 */

/** The unique index that keeps slugs unique per account, ignoring case; a violation means 'slug taken'. */
export const SLUG_UNIQUE_INDEX = 'conversation_account_slug_unique';

export const Workflow = defineEntity({
  name: 'Workflow',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    name: p.string().length(255),
    /** As saved: the domain's ZWorkflowSteps (ones saved before steps had a form may not parse). */
    steps: p.json<unknown[]>(),
    createdAt: createdAt(),
    updatedAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
    /** No longer copied onto new conversations; the copies made keep running. */
    disabledAt: p.datetime().columnType('timestamptz(6)').nullable(),
  },
});

export const IntakePage = defineEntity({
  name: 'IntakePage',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    name: p.string().length(255),
    /** Its address on the account's host, `/p/<key>` (unique per account, ignoring case). */
    key: p.string().length(60),
    title: p.string().length(255).default(''),
    welcomeText: p.text().default(''),
    /** How conversations started on it are titled ({name}, {words}, {page}, {date}); empty: "{name}: {words}". */
    conversationTitle: p.string().length(200).default(''),
    /** Visitors may start a conversation without giving a name and an e-mail address. */
    allowAnonymous: p.boolean().default(false),
    isPrimary: p.boolean().default(false),
    workflow: () => p.manyToOne(Workflow).nullable().deleteRule('set null'),
    /** The message (of a conversation of this account) shown to visitors above the form. */
    welcomeMessage: () => p.manyToOne(Message).nullable().deleteRule('set null'),
    createdAt: createdAt(),
    updatedAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
    /** Unusable, as a missing page is (the site and create_conversation alike). */
    disabledAt: p.datetime().columnType('timestamptz(6)').nullable(),
  },
  indexes: [
    {
      name: 'intake_page_account_key_unique',
      expression: 'create unique index "intake_page_account_key_unique" on "intake_page" ("account_id", lower("key"))',
    },
    {
      name: 'intake_page_one_primary_per_account',
      expression:
        'create unique index "intake_page_one_primary_per_account" on "intake_page" ("account_id") where "is_primary"',
    },
  ],
});

/** Who an intake page makes a member of every conversation it starts (beside the visitor). */
export const IntakePageMember = defineEntity({
  name: 'IntakePageMember',
  properties: {
    intakePage: () => p.manyToOne(IntakePage).primary().deleteRule('cascade').updateRule('no action'),
    user: () => p.manyToOne(User).primary().deleteRule('cascade').updateRule('no action'),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
  },
});

export const Conversation = defineEntity({
  name: 'Conversation',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    title: p.string().length(255),
    /** The title as get_conversation compares it (NFC and case-folded, computed by the domain's titleKey). */
    titleKey: p.text(),
    slug: p.string().length(100),
    anyoneCanPost: p.boolean(),
    allowAnonymousMessages: p.boolean(),
    allowSearchEngines: p.boolean(),
    viaPrimaryIntakePage: p.boolean().default(false),
    intakePage: () => p.manyToOne(IntakePage).nullable().deleteRule('set null'),
    /** The intake page's workflow, copied at creation (the domain's WorkflowCopy, each step with its state). */
    workflow: p.json<WorkflowCopy>().nullable(),
    createdAt: createdAt(),
    /** Its newest message's time, or its creation's: the team's inbox is ordered by it. */
    lastActivityAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
    /** When the team ended the access of the devices that started it: passes issued before open nothing. */
    passesValidAfter: p.datetime().columnType('timestamptz(6)').nullable(),
    /** The team's triage: the domain's ConversationState. */
    state: p.string().length(16).default('open'),
    /** How it began: the domain's ConversationSource. */
    source: p.string().length(16).default('api'),
    /** The teammate it is assigned to (a user of the account's team). */
    assignee: () => p.manyToOne(User).nullable().deleteRule('set null'),
    /** Out of the team's inbox until a message from the other side brings it back. */
    archivedAt: p.datetime().columnType('timestamptz(6)').nullable(),
    /**
     * The words its visible messages say, without positions, kept by the statements that write
     * messages (repositories/said.ts); never loaded with the row.
     */
    said: p.string().columnType('tsvector').defaultRaw(`''::tsvector`).lazy(),
  },
  checks: [
    {
      name: 'conversation_state_known',
      expression: `"state" in (${CONVERSATION_STATES.map((s) => `'${s}'`).join(', ')})`,
    },
    {
      name: 'conversation_source_known',
      expression: `"source" in (${CONVERSATION_SOURCES.map((s) => `'${s}'`).join(', ')})`,
    },
  ],
  indexes: [
    {
      name: SLUG_UNIQUE_INDEX,
      // The ASCII-only rule of the domain's slugKey, whatever the database's locale.
      expression: `create unique index "${SLUG_UNIQUE_INDEX}" on "conversation" ("account_id", ${SLUG_KEY_SQL('"slug"')})`,
    },
    {
      name: 'conversation_account_recent',
      expression:
        'create index "conversation_account_recent" on "conversation" ("account_id", "created_at" desc, "id" desc)',
    },
    {
      name: 'conversation_account_activity',
      expression:
        'create index "conversation_account_activity" on "conversation" ("account_id", "last_activity_at" desc, "id" desc)',
    },
    {
      // The inbox's search: the title's words and those its messages say (repositories/said.ts).
      name: 'conversation_search',
      expression: `create index "conversation_search" on "conversation" using gin ((to_tsvector('simple', "title") || "said"))`,
    },
    {
      name: 'conversation_account_title_recent',
      expression:
        'create index "conversation_account_title_recent" on "conversation" ("account_id", "title_key", "created_at" desc, "id" desc)',
    },
  ],
});

export const ConversationMember = defineEntity({
  name: 'ConversationMember',
  properties: {
    conversation: () => p.manyToOne(Conversation).primary().deleteRule('cascade'),
    user: () => p.manyToOne(User).primary().deleteRule('cascade'),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
  },
  triggers: [
    liveTrigger('member_live_added', 'insert', 'conversation_member', 'new table as new_rows', 'live_member_added'),
    liveTrigger('member_live_removed', 'delete', 'conversation_member', 'old table as old_rows', 'live_member_removed'),
  ],
});

export const Tag = defineEntity({
  name: 'Tag',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    name: p.string().length(100),
  },
  indexes: [
    {
      name: 'tag_account_name_unique',
      expression: 'create unique index "tag_account_name_unique" on "tag" ("account_id", lower("name"))',
    },
  ],
});

export const ConversationTag = defineEntity({
  name: 'ConversationTag',
  properties: {
    conversation: () => p.manyToOne(Conversation).primary().deleteRule('cascade'),
    tag: () => p.manyToOne(Tag).primary().deleteRule('cascade'),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
  },
});

export const Message = defineEntity({
  name: 'Message',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    conversation: () => p.manyToOne(Conversation).deleteRule('cascade'),
    messageType: p.string().length(32).default('text'),
    recordedDurationSeconds: p.integer().default(0),
    /** Null exactly when the author posted anonymously (the check below holds that). */
    author: () => p.manyToOne(User).nullable(),
    anonymous: p.boolean().default(false),
    /** A start's name while the address given is unconfirmed (no author yet: anonymous); null once confirmed. */
    claimedName: p.string().length(255).nullable(),
    text: p.text().default(''),
    /** How `text` is kept: the domain's MessageFormat (as written, or the safe subset of HTML the API takes). */
    format: p.string().length(8).default('text'),
    downloadMediaUrl: p.text().nullable(),
    /** A recording this server keeps: its key in the media store, probed type and size. */
    mediaKey: p.string().length(80).nullable(),
    mediaContentType: p.string().length(100).nullable(),
    mediaBytes: p.bigint().nullable(),
    /** A poster image is kept beside the recording (under its key with `.poster`). */
    poster: p.boolean().default(false),
    /** The workflow step job that posted it (unique: a step posts once); null for a person's message. */
    workflowJobId: p.integer().nullable(),
    /** The form token a reply was posted with: a resubmitted form finds its message instead of posting again. */
    submitKey: p.string().length(64).nullable(),
    /** The thread it replies in: its conversation's message that began it (one level); null for none. */
    parentId: p.integer().nullable(),
    /** A thread reply's moment of its thread's recording (whole seconds from its start); null for none. */
    atSeconds: p.integer().nullable(),
    /** An internal note: only the account's team sees it (pages, streams, mail, the API's get_messages). */
    internal: p.boolean().default(false),
    /** The message template it was made from, by id and name as they were (no reference: the template may go). */
    templateId: p.integer().nullable(),
    templateName: p.string().length(255).nullable(),
    createdAt: createdAt(),
    /** Hidden by the team: in no answer, but kept (and exported as hidden). */
    hiddenAt: p.datetime().columnType('timestamptz(6)').nullable(),
    hiddenBy: () => p.manyToOne(User).nullable().deleteRule('set null').fieldName('hidden_by'),
  },
  triggers: [
    liveTrigger('message_live_posted', 'insert', 'message', 'new table as new_rows', 'live_message_posted'),
    liveTrigger(
      'message_live_changed',
      'update',
      'message',
      'old table as old_rows new table as new_rows',
      'live_message_changed',
    ),
    liveTrigger('message_live_deleted', 'delete', 'message', 'old table as old_rows', 'live_message_deleted'),
    {
      // Each recording kept is to be transcribed once (transcripts.ts), whichever way it came.
      name: 'message_transcript_due',
      timing: 'after',
      events: ['insert'],
      forEach: 'row',
      expression:
        'create trigger "message_transcript_due" after insert on "message" for each row when (new.media_key is not null) execute function "transcript_due"();',
    },
  ],
  checks: [
    { name: 'message_author_or_anonymous', expression: '"anonymous" = ("author_id" is null)' },
    { name: 'message_type_known', expression: `"message_type" in ('text', 'video', 'screen', 'audio')` },
    { name: 'message_format_known', expression: `"format" in (${MESSAGE_FORMATS.map((f) => `'${f}'`).join(', ')})` },
    {
      name: 'message_media_is_recording',
      expression: `"media_key" is null or ("message_type" <> 'text' and "media_content_type" is not null and "media_bytes" is not null)`,
    },
  ],
  indexes: [
    {
      name: 'message_conversation_order',
      expression: 'create index "message_conversation_order" on "message" ("conversation_id", "created_at", "id")',
    },
    {
      // get_messages across the account's conversations, newest first.
      name: 'message_account_recent',
      expression: 'create index "message_account_recent" on "message" ("account_id", "created_at" desc, "id" desc)',
    },
    {
      name: 'message_parent',
      expression: 'create index "message_parent" on "message" ("parent_id") where "parent_id" is not null',
    },
    {
      // A conversation's thread replies (the page's anchors for those it does not show).
      name: 'message_conversation_replies',
      expression:
        'create index "message_conversation_replies" on "message" ("conversation_id", "id") where "parent_id" is not null',
    },
    {
      name: 'message_media_key',
      expression: 'create index "message_media_key" on "message" ("media_key") where "media_key" is not null',
    },
    {
      name: 'message_account_submit_key',
      expression:
        'create unique index "message_account_submit_key" on "message" ("account_id", "submit_key") where "submit_key" is not null',
    },
    {
      name: 'message_workflow_job',
      expression:
        'create unique index "message_workflow_job" on "message" ("workflow_job_id") where "workflow_job_id" is not null',
    },
  ],
});

/**
 * The team's library of reusable messages (the domain's messages/templates.ts). A template keeps
 * its own copy of a recording's columns: the recording stays while a template or a message holds
 * its key (media references), whatever becomes of the message it was taken from.
 */
export const MessageTemplate = defineEntity({
  name: 'MessageTemplate',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    name: p.string().length(255),
    text: p.text().default(''),
    format: p.string().length(8).default('text'),
    creator: () => p.manyToOne(User).nullable().deleteRule('set null'),
    messageType: p.string().length(32).default('text'),
    recordedDurationSeconds: p.integer().default(0),
    mediaKey: p.string().length(80).nullable(),
    mediaContentType: p.string().length(100).nullable(),
    mediaBytes: p.bigint().nullable(),
    poster: p.boolean().default(false),
    createdAt: createdAt(),
    updatedAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
  },
  checks: [
    {
      name: 'message_template_format_known',
      expression: `"format" in (${MESSAGE_FORMATS.map((f) => `'${f}'`).join(', ')})`,
    },
    {
      name: 'message_template_media_is_recording',
      expression: `"media_key" is null or ("message_type" <> 'text' and "media_content_type" is not null and "media_bytes" is not null)`,
    },
  ],
  indexes: [
    {
      name: 'message_template_account_name_unique',
      expression:
        'create unique index "message_template_account_name_unique" on "message_template" ("account_id", lower("name"))',
    },
    {
      name: 'message_template_media_key',
      expression:
        'create index "message_template_media_key" on "message_template" ("media_key") where "media_key" is not null',
    },
  ],
});

/**
 * A recording played past the receipt's threshold (the domain's messages/plays.ts): once per
 * message and viewing session (a site session or a visitor's cookie, by its hash), never by the
 * message's own side. The signed-in viewer is named; an anonymous one is counted.
 */
export const MessagePlay = defineEntity({
  name: 'MessagePlay',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    conversationId: p.integer(),
    message: () => p.manyToOne(Message).deleteRule('cascade'),
    viewer: () => p.manyToOne(User).nullable().deleteRule('set null'),
    sessionKey: p.string().length(64),
    playedAt: createdAt(),
  },
  triggers: [
    liveTrigger('message_play_live', 'insert', 'message_play', 'new table as new_rows', 'live_message_played'),
  ],
  indexes: [
    {
      name: 'message_play_session',
      expression: 'create unique index "message_play_session" on "message_play" ("message_id", "session_key")',
    },
  ],
});

/**
 * A reaction (reactions.ts): one of a fixed set, on a message, once per kind and person (a user,
 * or an anonymous visitor's session by its hash, `reactor_key`).
 */
export const MessageReaction = defineEntity({
  name: 'MessageReaction',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    conversationId: p.integer(),
    message: () => p.manyToOne(Message).deleteRule('cascade'),
    reaction: p.string().length(16),
    user: () => p.manyToOne(User).nullable().deleteRule('cascade'),
    reactorKey: p.string().length(64),
    createdAt: createdAt(),
  },
  triggers: [
    liveTrigger('message_reaction_live', 'insert', 'message_reaction', 'new table as new_rows', 'live_message_reacted'),
    liveTrigger(
      'message_reaction_live_gone',
      'delete',
      'message_reaction',
      'old table as old_rows',
      'live_message_unreacted',
    ),
  ],
  indexes: [
    {
      name: 'message_reaction_once',
      expression:
        'create unique index "message_reaction_once" on "message_reaction" ("message_id", "reaction", "reactor_key")',
    },
  ],
});

/** When each person last opened each conversation: the inbox marks what changed since. */
export const ConversationRead = defineEntity({
  name: 'ConversationRead',
  properties: {
    user: () => p.manyToOne(User).primary().deleteRule('cascade').updateRule('no action'),
    conversation: () => p.manyToOne(Conversation).primary().deleteRule('cascade').updateRule('no action'),
    accountId: p.integer(),
    readAt: createdAt(),
  },
});

/**
 * A recording's transcript (the domain's transcripts/): one per recording kept (its media key,
 * shared by every message a template posted with it), due from the moment a message brings it
 * (the message's trigger), written by the speech engine's job, corrected by the team. `status`
 * is the job's (a transcript is "off" where no engine is configured, which no row says);
 * `attempts` and `due_at` are its queue's.
 */
export const Transcript = defineEntity({
  name: 'Transcript',
  properties: {
    mediaKey: p.string().length(80).primary(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    status: p.string().length(16).default('pending'),
    language: p.string().length(16).nullable(),
    /** The timed segments ([{start, end, text}]), as the engine gave them or the team corrected them. */
    segments: p.json<{ start: number; end: number; text: string }[]>().nullable(),
    text: p.text().nullable(),
    /** Why the last try failed, in words the team reads. */
    reason: p.text().nullable(),
    attempts: p.integer().default(0),
    dueAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
    /** Who corrected it last, if anyone did. */
    correctedBy: () => p.manyToOne(User).nullable().deleteRule('set null'),
    createdAt: createdAt(),
    updatedAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
  },
  triggers: [
    liveTrigger(
      'transcript_live',
      'update',
      'transcript',
      'old table as old_rows new table as new_rows',
      'live_transcribed',
    ),
  ],
  checks: [
    {
      name: 'transcript_status_known',
      expression: `"status" in ('pending', 'complete', 'no_audio', 'failed')`,
    },
  ],
  indexes: [
    {
      name: 'transcript_due',
      expression: `create index "transcript_due" on "transcript" ("due_at") where "status" = 'pending'`,
    },
  ],
});
