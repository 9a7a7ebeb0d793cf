import { SLUG_KEY_SQL, type WorkflowCopy } from '@convo/domain';
import { defineEntity, p } from '@mikro-orm/core';

/*
 * Every table carries its account (join tables included), and every query filters by it, so the
 * schema can be sharded by account later without rewriting queries. Creation times are recorded
 * by the database (microsecond precision) rather than by the JS clock (milliseconds).
 */

/** The unique index that keeps slugs unique per account, ignoring case; a violation means 'slug taken'. */
export const SLUG_UNIQUE_INDEX = 'conversation_account_slug_unique';

const createdAt = () => p.datetime().columnType('timestamptz(6)').defaultRaw('now()');

export const Account = defineEntity({
  name: 'Account',
  properties: {
    id: p.integer().primary(),
    key: p.string().length(32).unique('account_key_unique'),
    name: p.string().length(255),
    host: p.string().length(255),
    defaultAnyoneCanPost: p.boolean().default(true),
    defaultAllowAnonymousMessages: p.boolean().default(true),
    defaultAllowSearchEngines: p.boolean().default(true),
    titleTemplate: p.string().length(255).default('{date} Conversation'),
    /** Requests each of the account's tokens may make per rate-limit window; null: the server's default. */
    rateLimit: p.integer().nullable(),
    owner: () => p.manyToOne(User).nullable().deleteRule('set null'),
    createdAt: createdAt(),
  },
  indexes: [{ name: 'account_host_index', properties: ['host'] }],
});

export const User = defineEntity({
  name: 'User',
  tableName: 'account_user',
  properties: {
    id: p.integer().primary(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    email: p.string().length(320),
    name: p.string().length(255),
    /** The user's place on the account's team (the domain's TEAM_ROLES), or null: a participant. */
    teamRole: p.string().length(16).nullable(),
    createdAt: createdAt(),
  },
  indexes: [
    {
      name: 'account_user_team',
      expression: 'create index "account_user_team" on "account_user" ("account_id") where "team_role" is not null',
    },
    {
      name: 'account_user_account_email_unique',
      expression:
        'create unique index "account_user_account_email_unique" on "account_user" ("account_id", lower("email"))',
    },
  ],
  checks: [{ name: 'account_user_team_role_check', expression: `"team_role" in ('owner', 'admin', 'member')` }],
});

export const ApiToken = defineEntity({
  name: 'ApiToken',
  properties: {
    id: p.integer().primary(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    name: p.string().length(255),
    /** SHA-256 of the token, hex; the token itself is never stored. */
    tokenHash: p.string().length(64).unique('api_token_hash_unique'),
    /** The first characters of the token, so an operator can tell tokens apart. */
    hint: p.string().length(16),
    createdAt: createdAt(),
    lastUsedAt: p.datetime().columnType('timestamptz(6)').nullable(),
    revokedAt: p.datetime().columnType('timestamptz(6)').nullable(),
  },
});

export const Workflow = defineEntity({
  name: 'Workflow',
  properties: {
    id: p.integer().primary(),
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
    id: p.integer().primary(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    name: p.string().length(255),
    /** Its address on the account's host, `/p/<key>` (unique per account, ignoring case). */
    key: p.string().length(60),
    title: p.string().length(255).default(''),
    welcomeText: p.text().default(''),
    /** Visitors may start a conversation without giving a name and an e-mail address. */
    allowAnonymous: p.boolean().default(false),
    isPrimary: p.boolean().default(false),
    workflow: () => p.manyToOne(Workflow).nullable().deleteRule('set null'),
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

export const Conversation = defineEntity({
  name: 'Conversation',
  properties: {
    id: p.integer().primary(),
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
  },
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
});

export const Tag = defineEntity({
  name: 'Tag',
  properties: {
    id: p.integer().primary(),
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
    id: p.integer().primary(),
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
    downloadMediaUrl: p.text().nullable(),
    /** A recording this server keeps: its key in the media store, probed type and size. */
    mediaKey: p.string().length(80).nullable(),
    mediaContentType: p.string().length(100).nullable(),
    mediaBytes: p.bigint().nullable(),
    /** The workflow step job that posted it (unique: a step posts once); null for a person's message. */
    workflowJobId: p.integer().nullable(),
    /** The form token a reply was posted with: a resubmitted form finds its message instead of posting again. */
    submitKey: p.string().length(64).nullable(),
    createdAt: createdAt(),
    /** Hidden by the team: in no answer, but kept (and exported as hidden). */
    hiddenAt: p.datetime().columnType('timestamptz(6)').nullable(),
    hiddenBy: () => p.manyToOne(User).nullable().deleteRule('set null'),
  },
  checks: [
    { name: 'message_author_or_anonymous', expression: '"anonymous" = ("author_id" is null)' },
    { name: 'message_type_known', expression: `"message_type" in ('text', 'video', 'screen', 'audio')` },
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

/** A person signed in on an account's site; the cookie holds the token, this row its SHA-256. */
export const SiteSession = defineEntity({
  name: 'SiteSession',
  properties: {
    id: p.integer().primary(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    user: () => p.manyToOne(User).deleteRule('cascade').index('site_session_user'),
    tokenHash: p.string().length(64).unique('site_session_token_hash_unique'),
    createdAt: createdAt(),
    expiresAt: p.datetime().columnType('timestamptz(6)').index('site_session_expires'),
  },
});

/** A one-time sign-in link e-mailed to an address; with a reply that waits for it, when there is one. */
export const SignInLink = defineEntity({
  name: 'SignInLink',
  properties: {
    id: p.integer().primary(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    /** The address the link was mailed to; whose it is is decided when the link is confirmed. */
    email: p.string().length(320),
    /** The name a new person gave with their reply, for when the address is nobody's yet. */
    name: p.string().length(255).nullable(),
    tokenHash: p.string().length(64).unique('sign_in_link_token_hash_unique'),
    returnPath: p.string().length(300),
    pendingReply: p.json<{ conversationId: number; text: string; submitKey: string | null }>().nullable(),
    /** The unconfirmed start whose message it puts the address's person's name on, when confirmed. */
    claimMessageId: p.integer().nullable(),
    createdAt: createdAt(),
    expiresAt: p.datetime().columnType('timestamptz(6)').index('sign_in_link_expires'),
    usedAt: p.datetime().columnType('timestamptz(6)').nullable(),
  },
});

/** A one-time code carrying an embed's start into its frame: taken once, within ten minutes. */
export const PassCode = defineEntity({
  name: 'PassCode',
  properties: {
    /** SHA-256 of the code, hex; the code itself is only ever in the frame's first address. */
    codeHash: p.string().length(64).primary(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    /** The pass's grant it gives (`<conversation>-<person or 0>-<issued ms>`). */
    grant: p.string().length(64),
    expiresAt: p.datetime().columnType('timestamptz(6)').index('pass_code_expires'),
  },
});

/** Mail waiting for a worker (any replica's): the body is cleared once sent, since it may hold a link. */
export const OutgoingMail = defineEntity({
  name: 'OutgoingMail',
  properties: {
    id: p.integer().primary(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    recipient: p.string().length(320),
    subject: p.string().length(255),
    body: p.text().nullable(),
    /** Headers beside From, To and Subject (List-Unsubscribe on notifications). */
    headers: p.json<Record<string, string>>().nullable(),
    createdAt: createdAt(),
    nextAttemptAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
    attempts: p.integer().default(0),
    lastError: p.text().nullable(),
    sentAt: p.datetime().columnType('timestamptz(6)').nullable(),
  },
});

/** Form submissions per client address or e-mail in the current window, shared by every process. */
export const VisitorRateLimit = defineEntity({
  name: 'VisitorRateLimit',
  properties: {
    key: p.string().length(400).primary(),
    windowStart: p.datetime().columnType('timestamptz(6)'),
    used: p.integer(),
  },
});

/**
 * One row per token: how many requests the token's processes have claimed in the current
 * fixed window. Processes claim quota in blocks, so this row is written once per block, not
 * once per request, and the sum of the claims never passes the limit.
 */
export const RateLimitBucket = defineEntity({
  name: 'RateLimitBucket',
  properties: {
    token: () => p.manyToOne(ApiToken).primary().deleteRule('cascade'),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    windowStart: p.datetime().columnType('timestamptz(6)'),
    used: p.integer(),
  },
});

/**
 * A create made with an Idempotency-Key: the request's fingerprint and the response it got, so
 * a retry replays it. The row is written in the create's own transaction, so a concurrent retry
 * waits for the first and then replays; a create that fails leaves no row (and its retry runs
 * again, reaching the same answer).
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  properties: {
    account: () => p.manyToOne(Account).primary().deleteRule('cascade'),
    key: p.string().length(255).primary(),
    /** SHA-256 of the validated input, hex. */
    fingerprint: p.string().length(64),
    /** The response body exactly as first sent (json, not jsonb: key order is kept); only 201s are kept. */
    body: p.json().columnType('json').nullable(),
    createdAt: createdAt(),
  },
  indexes: [{ name: 'idempotency_key_created', properties: ['createdAt'] }],
});

export const entities = [
  Account,
  User,
  ApiToken,
  Workflow,
  IntakePage,
  Conversation,
  ConversationMember,
  Tag,
  ConversationTag,
  Message,
  RateLimitBucket,
  IdempotencyKey,
  SiteSession,
  SignInLink,
  OutgoingMail,
  VisitorRateLimit,
  PassCode,
];
