import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, liveTrigger } from './columns.ts';

/*
 * Accounts, their people and their API tokens, and what every request of an account's touches:
 * rate-limit buckets, idempotency keys, change marks, the site's shared secrets.
 */

export const Account = defineEntity({
  name: 'Account',
  properties: {
    id: p.integer().primary().autoincrement(),
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
    id: p.integer().primary().autoincrement(),
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
  triggers: [
    liveTrigger(
      'user_live_team_changed',
      'update',
      'account_user',
      'old table as old_rows new table as new_rows',
      'live_team_changed',
    ),
  ],
  checks: [{ name: 'account_user_team_role_check', expression: `"team_role" in ('owner', 'admin', 'member')` }],
});

export const ApiToken = defineEntity({
  name: 'ApiToken',
  properties: {
    id: p.integer().primary().autoincrement(),
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

/**
 * Each account's change mark, for conditional requests: every statement that changes what the API
 * answers adds one to one of the account's shards, and the mark is their sum.
 */
export const AccountChange = defineEntity({
  name: 'AccountChange',
  properties: {
    account: () => p.manyToOne(Account).primary().deleteRule('cascade').updateRule('no action'),
    shard: p.smallint().primary(),
    seq: p.bigint('number').defaultRaw('0'),
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

/** Secrets every replica shares (the key that signs the links in mail), made by the database. */
export const SiteSecret = defineEntity({
  name: 'SiteSecret',
  properties: {
    name: p.string().length(64).primary(),
    value: p.text(),
  },
});
