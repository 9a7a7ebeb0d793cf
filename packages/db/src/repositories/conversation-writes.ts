import {
  type NewConversation,
  SlugTakenError,
  type StoredConversation,
  timestamptzText,
  titleKey,
  type WorkflowCopy,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type RawBuilder, sql } from 'kysely';
import { SLUG_UNIQUE_INDEX } from '../entities/index.ts';
import { changeMark } from './change-marks.ts';
import { column, db, run, slot, statement } from './query.ts';
import { wordsOf } from './said.ts';
import { violatesUnique } from './sql.ts';
import { webhookEvents } from './webhook-outbox.ts';
import { workflowEvents } from './workflow-jobs.ts';

const account = () => slot<number>('account');

/** The columns a new conversation is given (the others keep their defaults). */
const CONVERSATION_COLUMNS = [
  'account_id',
  'created_at',
  'last_activity_at',
  'title',
  'title_key',
  'slug',
  'anyone_can_post',
  'allow_anonymous_messages',
  'allow_search_engines',
  'via_primary_intake_page',
  'intake_page_id',
  'source',
  'workflow',
  'said',
] as const;

/** What each column is given: the slots `conversationArgs` fills. */
const conversationValues = () =>
  ({
    account_id: account(),
    // As text: a Date would drop the microseconds.
    created_at: sql<Date>`${slot<string>('createdAt')}::timestamptz`,
    last_activity_at: sql<Date>`${slot<string>('createdAt')}::timestamptz`,
    title: slot<string>('title'),
    title_key: slot<string>('titleKey'),
    slug: slot<string>('slug'),
    anyone_can_post: slot<boolean>('anyoneCanPost'),
    allow_anonymous_messages: slot<boolean>('allowAnonymousMessages'),
    allow_search_engines: slot<boolean>('allowSearchEngines'),
    via_primary_intake_page: slot<boolean>('viaPrimaryIntakePage'),
    intake_page_id: sql<number | null>`${slot('intakePage')}::int`,
    source: sql<string>`${slot('source')}::varchar`,
    workflow: sql<WorkflowCopy | null>`${slot('workflow')}::jsonb`,
    // The words of its first message, where one is written with it (an intake page's start).
    said: wordsOf(sql<string>`${slot('firstText')}::text`),
  }) satisfies Record<(typeof CONVERSATION_COLUMNS)[number], RawBuilder<unknown>>;

/** The conversation's insert (each value checked against its column's type). */
const insertConversation = () => db.insertInto('conversation').values(conversationValues());

/** The same row, inserted only where `when` holds: a statement that may decide to write nothing. */
export const insertConversationWhere = (when: RawBuilder<boolean>) => {
  const values: Record<(typeof CONVERSATION_COLUMNS)[number], RawBuilder<unknown>> = conversationValues();
  return db
    .insertInto('conversation')
    .columns(CONVERSATION_COLUMNS)
    .expression(db.selectNoFrom(CONVERSATION_COLUMNS.map((column) => values[column].as(column))).where(when));
};

/** What fills `insertConversation`'s slots, and the members' and the workflow's. */
export const conversationArgs = (accountId: number, c: NewConversation) => ({
  account: accountId,
  createdAt: timestamptzText(c.createdAt),
  title: c.title,
  titleKey: titleKey(c.title),
  slug: c.slug,
  anyoneCanPost: c.anyoneCanPost,
  allowAnonymousMessages: c.allowAnonymousMessages,
  allowSearchEngines: c.allowSearchEngines,
  viaPrimaryIntakePage: c.viaPrimaryIntakePage,
  intakePage: c.intakePageId,
  source: c.source,
  workflow: c.workflow === null ? null : JSON.stringify(c.workflow),
  members: c.memberIds,
  hasWorkflow: c.workflow !== null,
  firstText: '',
});

/**
 * One statement, one round trip: the conversation row, its members, its webhook event where the
 * account subscribed one, the account's change mark, and the event its workflow's steps are
 * planned from (when it has a copy of one), written together by CTEs. A single statement is
 * atomic, so no transaction is opened; as a named prepared statement it is planned once per
 * connection. Four round trips (begin, two inserts, commit) were the largest cost of create: each
 * socket write wakes PostgreSQL on the cores the server shares with it.
 */
const INSERT = statement(
  'conversation_insert',
  db
    .with('c', () => insertConversation().returning('id'))
    .with('m', (q) =>
      q
        .insertInto('conversation_member')
        .columns(['conversation_id', 'user_id', 'account_id'])
        .expression(
          q
            .selectFrom('c')
            .crossJoin(sql<{ u: number }>`unnest(${slot<number[]>('members')}::int[])`.as('u'))
            .select(['c.id', column<number>('u').as('user_id'), account().as('account_id')]),
        ),
    )
    .with('webhook_ev', () =>
      webhookEvents('c', sql<number>`${account()}::int`, {
        type: 'conversation_created',
        conversation: column('c.id'),
        message: sql<null>`null::int`,
      }),
    )
    .with('change_mark', () => changeMark('c', sql<number>`${account()}::int`))
    .with('workflow_ev', () =>
      workflowEvents(
        'c',
        {
          account: sql<number>`${account()}::int`,
          conversation: column('c.id'),
          when: sql<boolean>`${slot('hasWorkflow')}::boolean`,
        },
        { message: sql<null>`null::int`, author: sql<null>`null::int` },
      ),
    )
    .selectFrom('c')
    .select('c.id'),
);

export const isSlugTaken = (e: unknown): boolean => violatesUnique(e, SLUG_UNIQUE_INDEX);

/**
 * Creates the conversation. Outside a transaction the statement runs prepared; inside
 * insertOnce's (the Idempotency-Key create) it runs in it, so a refused insert fails that whole
 * transaction, key claim included, which is what a refused create must leave behind: nothing.
 */
export async function insertOne(em: EntityManager, accountId: number, c: NewConversation): Promise<StoredConversation> {
  try {
    const [row] = await run(em, INSERT, conversationArgs(accountId, c));
    if (!row) throw new Error('the conversation insert returned no id');
    return { id: row.id };
  } catch (e) {
    if (isSlugTaken(e)) throw new SlugTakenError();
    throw e;
  }
}
