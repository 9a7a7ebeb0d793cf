import type { EntityManager } from '@mikro-orm/core';
import { query } from './sql.ts';

/**
 * Makes the account's tags of these names that it lacks (one per name, ignoring case), in the
 * caller's transaction. A statement of its own before the one that uses them: a tag another
 * replica is making at this moment is waited for by this insert, but would be invisible to a
 * select in the same statement (its snapshot is older); the next statement sees it.
 */
export async function makeTags(tx: EntityManager, accountId: number, names: readonly string[]): Promise<void> {
  await query(
    tx,
    `insert into tag (account_id, name) select ?, t from jsonb_array_elements_text(?::jsonb) t
     on conflict (account_id, lower(name)) do nothing`,
    [accountId, JSON.stringify(names)],
  );
}
