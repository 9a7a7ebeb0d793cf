import type { PendingReply } from '@convo/domain';
import { defineEntity, p } from '@mikro-orm/core';
import { Account, User } from './accounts.ts';
import { createdAt, liveTrigger } from './columns.ts';

/*
 * People signed in on an account's site: sessions, one-time sign-in links, embed pass codes.
 */

/** A person signed in on an account's site; the cookie holds the token, this row its SHA-256. */
export const SiteSession = defineEntity({
  name: 'SiteSession',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    user: () => p.manyToOne(User).deleteRule('cascade').index('site_session_user'),
    tokenHash: p.string().length(64).unique('site_session_token_hash_unique'),
    createdAt: createdAt(),
    expiresAt: p.datetime().columnType('timestamptz(6)').index('site_session_expires'),
  },
  triggers: [
    liveTrigger('session_live_ended', 'delete', 'site_session', 'old table as old_rows', 'live_session_ended'),
  ],
});

/** A one-time sign-in link e-mailed to an address; with a reply that waits for it, when there is one. */
export const SignInLink = defineEntity({
  name: 'SignInLink',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    /** The address the link was mailed to; whose it is is decided when the link is confirmed. */
    email: p.string().length(320),
    /** The name a new person gave with their reply, for when the address is nobody's yet. */
    name: p.string().length(255).nullable(),
    tokenHash: p.string().length(64).unique('sign_in_link_token_hash_unique'),
    returnPath: p.string().length(300),
    pendingReply: p.json<PendingReply>().nullable(),
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
