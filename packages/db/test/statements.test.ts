import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, run, slot, statement } from '../src/repositories/query.ts';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * Statements built once: a constant of the query is written into the text, so that PostgreSQL's
 * generic plan knows it (a `limit $n` it cannot see made it plan every lookup anew); only the
 * slots are parameters.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database.close());

describe('statement()', () => {
  it('writes constants into the text and keeps slots as parameters, numbered once each', () => {
    const s = statement(
      'test_limit',
      db
        .selectFrom('account')
        .select('id')
        .where('key', '=', slot<string>('key'))
        .where('name', '<>', slot<string>('key'))
        .limit(1),
    );
    expect(s.text).toMatch(/limit 1$/);
    expect(s.text).not.toMatch(/\$2/);
    expect(s.parameters).toEqual([{ key: 'key' }]);
  });

  it('reads every kind of constant back as it was written', async () => {
    const s = statement(
      'test_constants',
      db.selectNoFrom([
        sql<string>`${"it's 'quoted' \\ and $1"}::text`.as('text'),
        sql<number>`1 -${-2}`.as('minus'),
        sql<boolean>`${true}`.as('yes'),
        sql<string | null>`${null}::text`.as('nothing'),
        sql<string>`${slot<string>('given')}::text`.as('given'),
      ]),
    );
    const [row] = await run(database.orm.em.fork(), s, { given: 'from the run' });
    expect(row).toEqual({
      text: "it's 'quoted' \\ and $1",
      minus: 3,
      yes: true,
      nothing: null,
      given: 'from the run',
    });
  });

  it('refuses a constant no literal can say, when the statement is built', () => {
    expect(() =>
      statement('test_date', db.selectFrom('account').select('id').where('created_at', '<', new Date(0))),
    ).toThrow(/test_date: the constant .* is not a literal; make it a slot/);
  });
});
