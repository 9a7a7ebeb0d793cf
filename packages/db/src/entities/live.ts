import { defineEntity, p } from '@mikro-orm/core';
import { createdAt } from './columns.ts';

/*
 * The live feed the streams read, how far its purge went, and which accounts someone watches.
 */

/**
 * The live feed: one row per change a stream shows, written by the triggers on the tables it
 * watches, read in commit order by (xid, id). Kept a day.
 */
export const LiveEvent = defineEntity({
  name: 'LiveEvent',
  properties: {
    id: p.bigint('number').primary().autoincrement().columnType('bigint generated always as identity'),
    xid: p.string().columnType('xid8').defaultRaw('pg_current_xact_id()'),
    accountId: p.integer(),
    conversationId: p.integer().nullable(),
    kind: p.string().length(16),
    messageId: p.integer().nullable(),
    userId: p.integer().nullable(),
    /** An event of an internal note: for the team's streams alone. */
    internal: p.boolean().default(false),
    createdAt: createdAt().index('live_event_created'),
  },
  indexes: [
    { name: 'live_event_position', expression: 'create index "live_event_position" on "live_event" ("xid", "id")' },
    {
      name: 'live_event_conversation',
      expression:
        'create index "live_event_conversation" on "live_event" ("conversation_id", "xid", "id") where "conversation_id" is not null',
    },
  ],
});

/** The newest feed position the purge has deleted (one row): a stream resuming before it starts again. */
export const LivePurged = defineEntity({
  name: 'LivePurged',
  properties: {
    one: p.boolean().primary().default(true),
    xid: p.string().columnType('xid8'),
    eventId: p.bigint('number'),
  },
  checks: [{ name: 'live_purged_one_check', expression: '"one"' }],
});

/** Until when some process holds live streams of an account: only watched accounts' writes notify. */
export const LiveWatch = defineEntity({
  name: 'LiveWatch',
  properties: {
    accountId: p.integer().primary().autoincrement(false),
    until: p.datetime().columnType('timestamptz(6)'),
  },
});
