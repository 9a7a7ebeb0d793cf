import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * One schema: every table is an entity, and the migrations make exactly what the entities
 * describe. MikroORM's schema generator compares the two; a column, index, key, check or trigger
 * that one side has and the other lacks is a difference it would write a migration for.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => db?.close());

const difference = () => db.orm.schema.getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: true });

describe('the entities and the migrations', () => {
  it('describe the same schema', async () => {
    expect(await difference()).toBe('');
  });

  it('are told apart when the database drifts (an index, a trigger, a table)', async () => {
    const run = (sql: string) => db.orm.em.fork().getConnection().execute(sql);
    await run('drop index "live_event_created"');
    await run('drop trigger "session_live_ended" on "site_session"');
    await run('create table "stray" ("id" int primary key)');
    try {
      const sql = await difference();
      expect(sql).toMatch(/create index "live_event_created"/);
      expect(sql).toMatch(/create trigger "session_live_ended"/);
      expect(sql).toMatch(/drop table if exists "stray"/);
    } finally {
      await run('drop table "stray"');
      await run('create index "live_event_created" on "live_event" ("created_at")');
      await run(
        'create trigger "session_live_ended" after delete on "site_session" referencing old table as old_rows for each statement execute function "live_session_ended"()',
      );
    }
    expect(await difference()).toBe('');
  });
});
