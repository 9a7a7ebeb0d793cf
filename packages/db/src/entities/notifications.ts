import { defineEntity, p } from '@mikro-orm/core';
import { Account, User } from './accounts.ts';
import { createdAt } from './columns.ts';
import { Conversation } from './conversations.ts';

/*
 * Mail to people: the events a worker fans out into digests, who muted or follows what, the outbox.
 */

/**
 * A posted message, one row per statement whatever the number of members, or a counted play of
 * one (`playId`, `authorId` its viewer): the notifier fans it out.
 */
export const NotifyEvent = defineEntity({
  name: 'NotifyEvent',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    conversationId: p.integer(),
    messageId: p.integer(),
    authorId: p.integer().nullable(),
    playId: p.bigint('number').nullable(),
    reactionId: p.bigint('number').nullable(),
    /** A start's message under an address nobody confirmed: the round mails it a link back. */
    comeBackEmail: p.string().length(255).nullable(),
  },
});

/** One pending mail per person and conversation, due a batch window after its first message or play. */
export const NotificationDigest = defineEntity({
  name: 'NotificationDigest',
  properties: {
    conversation: () => p.manyToOne(Conversation).primary().deleteRule('cascade').updateRule('no action'),
    user: () => p.manyToOne(User).primary().deleteRule('cascade').updateRule('no action'),
    accountId: p.integer(),
    firstMessageId: p.integer().nullable(),
    firstPlayId: p.bigint('number').nullable(),
    firstReactionId: p.bigint('number').nullable(),
    dueAt: p.datetime().columnType('timestamptz(6)').index('notification_digest_due'),
  },
});

/**
 * Who asked for no more mail (`kind` 'all') or no more play notices ('plays'): of one
 * conversation, or (conversation 0) of the whole account.
 */
export const NotificationMute = defineEntity({
  name: 'NotificationMute',
  properties: {
    account: () => p.manyToOne(Account).primary().deleteRule('cascade').updateRule('no action'),
    user: () => p.manyToOne(User).primary().deleteRule('cascade').updateRule('no action'),
    conversationId: p.integer().primary().default(0),
    kind: p.string().length(8).primary().default('all'),
  },
});

/** Who asked for a public conversation's mail without being a member. */
export const ConversationFollower = defineEntity({
  name: 'ConversationFollower',
  properties: {
    conversation: () => p.manyToOne(Conversation).primary().deleteRule('cascade').updateRule('no action'),
    user: () => p.manyToOne(User).primary().deleteRule('cascade').updateRule('no action'),
    accountId: p.integer(),
  },
});

/** Mail waiting for a worker (any replica's): the body is cleared once sent, since it may hold a link. */
export const OutgoingMail = defineEntity({
  name: 'OutgoingMail',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    recipient: p.string().length(320),
    subject: p.string().length(255),
    body: p.text().nullable(),
    /** Its HTML part, when the domain wrote one (else the sender makes one of the body). */
    html: p.text().nullable(),
    /** Headers beside From, To and Subject (List-Unsubscribe on notifications). */
    headers: p.json<Record<string, string>>().nullable(),
    createdAt: createdAt(),
    nextAttemptAt: p.datetime().columnType('timestamptz(6)').defaultRaw('now()'),
    attempts: p.integer().default(0),
    lastError: p.text().nullable(),
    /**
     * Written by versions before 2026-12-06 only: a sent mail now leaves the table. Kept so that a
     * replica of the older version, during an upgrade, can still mark what it sent.
     */
    sentAt: p.datetime().columnType('timestamptz(6)').nullable(),
  },
  indexes: [
    {
      name: 'outgoing_mail_due',
      expression:
        'create index "outgoing_mail_due" on "outgoing_mail" ("next_attempt_at", "id") where "sent_at" is null',
    },
  ],
});

/**
 * An address a notification may be answered at (reply by e-mail): only its token's SHA-256 is
 * kept, bound to one person and one conversation (or thread), good until `expiresAt` and for a
 * number of uses; `messageId` is the mail's own Message-ID, for a reply that lost the address.
 */
export const ReplyAddress = defineEntity({
  name: 'ReplyAddress',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade').updateRule('no action'),
    user: () => p.manyToOne(User).deleteRule('cascade').updateRule('no action'),
    /** Null once the conversation is deleted: a reply to it is then answered that it is gone. */
    conversation: () => p.manyToOne(Conversation).nullable().deleteRule('set null').updateRule('no action'),
    /** The thread's first message, when the mail was about one thread alone. */
    parentId: p.integer().nullable(),
    tokenHash: p.string().length(64).unique(),
    messageId: p.string().length(255).unique(),
    createdAt: createdAt(),
    expiresAt: p.datetime().columnType('timestamptz(6)'),
    uses: p.integer().default(0),
    /** When a mail to it was last answered with a bounce (one an hour at most). */
    bouncedAt: p.datetime().columnType('timestamptz(6)').nullable(),
  },
  // A person or conversation deleted takes its addresses; the purge finds the expired ones.
  indexes: [
    { name: 'reply_address_user', properties: ['user'] },
    { name: 'reply_address_conversation', properties: ['conversation'] },
    { name: 'reply_address_expires', properties: ['expiresAt'] },
  ],
});

/**
 * A reply mail taken in, by the address it came to and its Message-ID's SHA-256: the same mail
 * (a relay's retry, another replica's copy) is acted on once.
 */
export const InboundMail = defineEntity({
  name: 'InboundMail',
  properties: {
    replyAddress: () => p.manyToOne(ReplyAddress).primary().deleteRule('cascade').updateRule('no action'),
    messageKey: p.string().length(64).primary(),
    accountId: p.integer(),
    /** What came of it: posted, refused (and bounced), dropped. */
    outcome: p.string().length(16),
    createdAt: createdAt(),
  },
});
