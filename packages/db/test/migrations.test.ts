import { titleKey } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * Migrations run on data, not only on empty schemas: the comparison-keys migration recomputes
 * every title key by the domain's rule and moves the slug index to the ASCII-only rule.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => db?.close());

const run = (sql: string, params: unknown[] = []) =>
  db.orm.em.fork().getConnection().execute(sql, params) as Promise<Record<string, unknown>[]>;

describe('the comparison-keys migration', () => {
  it('rewrites old title keys by the folding rule and indexes slugs by the ASCII rule', async () => {
    await db.orm.migrator.down({ to: 'Migration20261121065351_limits_and_idempotency' });
    const [account] = await run(
      `insert into account (key, name, host) values ('m', 'M', 'https://m.example') returning id`,
    );
    const titles = ['Straße', 'ΟΔΟΣ', 'Cafe\u0301', 'plain'];
    for (const [i, title] of titles.entries()) {
      await run(
        'insert into conversation (account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages, allow_search_engines) values (?, ?, lower(?), ?, true, true, true)',
        [account?.id, title, title, `s-${i}`],
      );
    }
    await db.orm.migrator.up();
    const rows = await run('select title, title_key from conversation order by id');
    expect(rows.map((r) => r.title_key)).toEqual(titles.map(titleKey));
    expect(rows.map((r) => r.title_key)).toEqual(['strasse', 'οδοσ', 'café', 'plain']);
    const [index] = await run("select indexdef from pg_indexes where indexname = 'conversation_account_slug_unique'");
    expect(String(index?.indexdef)).toMatch(/lower\(\(\(slug\)::text COLLATE "C"\)\)/);
  });

  it('lets a slug lookup use that index', async () => {
    // The table is tiny, so the planner is told to prefer an index where one serves.
    const plan = await db.orm.em.fork().transactional(async (tx) => {
      const connection = tx.getConnection();
      const ctx = tx.getTransactionContext();
      await connection.execute('set local enable_seqscan = off', [], 'all', ctx);
      return connection.execute(
        `explain select id from conversation where account_id = 1 and lower(slug collate "C") = 's-1'`,
        [],
        'all',
        ctx,
      );
    });
    expect(JSON.stringify(plan)).toMatch(/conversation_account_slug_unique/);
  });
});
