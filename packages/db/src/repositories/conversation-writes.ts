import {
  type NewConversation,
  SlugTakenError,
  type StoredConversation,
  timestamptzText,
  titleKey,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { Conversation, ConversationMember, SLUG_UNIQUE_INDEX } from '../entities/index.ts';
import { markChange, markChangeSql } from './change-marks.ts';
import { type Prepared, runPrepared } from './prepared.ts';
import { violatesUnique } from './sql.ts';
import { emitEventIn, emitEventSql } from './webhook-outbox.ts';
import { workflowEventIn, workflowEventSql } from './workflow-jobs.ts';

let insertSql: string | undefined;
let insertPrepared: Prepared | undefined;

/** The conversation's row, in the entity's terms: both inserts write exactly this. */
const conversationData = (accountId: number, c: NewConversation) => ({
  account: accountId,
  // As text: a Date would drop the microseconds.
  createdAt: timestamptzText(c.createdAt),
  lastActivityAt: timestamptzText(c.createdAt),
  title: c.title,
  titleKey: titleKey(c.title),
  slug: c.slug,
  anyoneCanPost: c.anyoneCanPost,
  allowAnonymousMessages: c.allowAnonymousMessages,
  allowSearchEngines: c.allowSearchEngines,
  viaPrimaryIntakePage: c.viaPrimaryIntakePage,
  intakePage: c.intakePageId,
  workflow: c.workflow,
});

/** The row as the entity's query builder writes it: columns, JSON serialisation, references. */
export const conversationRow = (em: EntityManager, accountId: number, c: NewConversation) =>
  (em as SqlEntityManager).createQueryBuilder(Conversation).insert(conversationData(accountId, c)).toQuery();

/** The builder's insert, with the members' insert beside it in one statement ($n placeholders). */
function insertStatement(em: EntityManager, accountId: number, c: NewConversation) {
  const { sql, params } = conversationRow(em, accountId, c);
  if (!insertPrepared) {
    const columns = /^insert into "conversation" \(([^)]*)\)/.exec(sql)?.[1]?.split(', ') ?? [];
    const account = columns.indexOf('"account_id"') + 1;
    if (account === 0) throw new Error(`unexpected conversation insert: ${sql}`);
    let n = 0;
    const numbered = sql.replace(/\?/g, () => `$${++n}`);
    insertSql = sql;
    insertPrepared = {
      name: 'conversation_insert',
      text: `with c as (${numbered}),
        m as (insert into conversation_member (conversation_id, user_id, account_id)
              select c.id, u, $${account} from c cross join unnest($${n + 1}::int[]) as u),
        ${emitEventSql({ source: 'c', type: 'conversation_created', account: `$${account}::int`, conversation: 'c.id', message: 'null::int' })},
        ${markChangeSql({ source: 'c', account: `$${account}::int` })},
        ${workflowEventSql({ source: 'c', account: `$${account}::int`, conversation: 'c.id', message: 'null::int', author: 'null::int', when: `$${n + 2}::boolean` })}
        select id from c`,
    };
  }
  // Every insert names the same columns, so the statement's text never changes.
  if (sql !== insertSql) throw new Error(`conversation insert changed shape: ${sql}`);
  return { statement: insertPrepared, params: [...params, c.memberIds, c.workflow !== null] };
}

export const isSlugTaken = (e: unknown): boolean => violatesUnique(e, SLUG_UNIQUE_INDEX);

/**
 * One statement, one round trip: the conversation row (as the entity's query builder writes it),
 * its members, its webhook event where the account subscribed one, the account's change mark, and
 * the event its workflow's steps are planned from (when it has a copy of one),
 * written together by CTEs. A single statement is atomic, so no transaction
 * is opened; as a named prepared statement it is planned once per connection. Four round trips
 * (begin, two inserts, commit) were the largest cost of create: each socket write wakes
 * PostgreSQL on the cores the server shares with it.
 */
export async function insertOne(em: EntityManager, accountId: number, c: NewConversation): Promise<StoredConversation> {
  const { statement, params } = insertStatement(em, accountId, c);
  try {
    const [row] = await runPrepared<{ id: number }>(em, statement, params);
    if (!row) throw new Error('the conversation insert returned no id');
    return { id: row.id };
  } catch (e) {
    if (isSlugTaken(e)) throw new SlugTakenError();
    throw e;
  }
}

/**
 * The insert inside insertOnce's transaction (prepared statements run outside transactions). A
 * refused insert fails that whole transaction, key claim included, which is what a refused create
 * must leave behind: nothing.
 */
export async function insertInTransaction(
  tx: EntityManager,
  accountId: number,
  c: NewConversation,
): Promise<StoredConversation> {
  try {
    const id = (await tx.insert(Conversation, conversationData(accountId, c))) as number;
    if (c.memberIds.length > 0) {
      await tx.insertMany(
        ConversationMember,
        c.memberIds.map((user) => ({ conversation: id, user, account: accountId })),
      );
    }
    await emitEventIn(tx, accountId, 'conversation_created', id, null);
    if (c.workflow !== null) await workflowEventIn(tx, accountId, id);
    await markChange(tx, accountId);
    return { id };
  } catch (e) {
    if (isSlugTaken(e)) throw new SlugTakenError();
    throw e;
  }
}
