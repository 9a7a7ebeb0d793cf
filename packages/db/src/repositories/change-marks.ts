import type { EntityManager } from '@mikro-orm/core';
import { type Expression, type RawBuilder, sql } from 'kysely';
import { db, exec } from './query.ts';

/*
 * An account's change mark: what a conditional request (If-None-Match) and a kept page (of
 * get_conversations, of the inbox's search) are judged by. Every statement that changes what the
 * API answers for an account, or what the inbox's search finds (a transcript's words), adds one to
 * one of its shards, in that same statement, so a change that is committed has raised the mark
 * and one that is rolled back has not. The mark is the shards' sum: it only grows, on every
 * replica at once.
 */

/** Shards per account: concurrent creates pick one at random and rarely wait for each other. */
const SHARDS = 16;

/**
 * The insert of a `with` (named `change_mark`) that counts a change of `account` when `source` has
 * rows: `.with('change_mark', () => changeMark('joined', account))`.
 */
export const changeMark = (source: string, account: RawBuilder<number>) =>
  db
    .insertInto('account_change')
    .columns(['account_id', 'shard', 'seq'])
    .expression(
      db
        .selectNoFrom([
          account.as('account_id'),
          sql<number>`floor(random() * ${sql.lit(SHARDS)})::smallint`.as('shard'),
          sql<number>`1`.as('seq'),
        ])
        .where(sql<boolean>`exists (select 1 from ${sql.table(source)})`),
    )
    .onConflict((c) => c.columns(['account_id', 'shard']).doUpdateSet({ seq: sql<number>`account_change.seq + 1` }));

/** The same, as a statement of its own (inside the caller's transaction, if any). */
export async function markChange(em: EntityManager, accountId: number): Promise<void> {
  await exec(
    em,
    db
      .with('src', () => db.selectNoFrom(sql<number>`1`.as('one')))
      .with('change_mark', () => changeMark('src', sql<number>`${accountId}::int`))
      .selectNoFrom(sql<number>`1`.as('done')),
  );
}

/** The account's mark: the sum of its shards (text, for bigint's sake), as a query or a subquery. */
export const changeMarkOf = (account: Expression<number>) =>
  db
    .selectFrom('account_change')
    .select(sql<string>`coalesce(sum(seq), 0)::text`.as('mark'))
    .where('account_id', '=', account);
