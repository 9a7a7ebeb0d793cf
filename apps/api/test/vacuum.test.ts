import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { loadConfig } from '../src/start/config.ts';
import { buildApp } from '../src/start/server.ts';
import { createJson, type Harness, makeAccount, openHarness, type TestAccount } from './support/harness.ts';

/*
 * On a PostgreSQL server with autovacuum off, the server vacuums the tables it churns itself;
 * with autovacuum on it leaves them to the server. Either way the test holds the process to what
 * the server's own setting asks for. (The embedded database is never vacuumed: not run there.)
 */

const onPostgres = Boolean(process.env.DATABASE_URL);
let h: Harness;
let a: TestAccount;

beforeAll(async () => {
  if (!onPostgres) return;
  h = await openHarness();
  a = await makeAccount(h, 'vacuumed');
});
afterAll(async () => h?.close());

interface TableStats {
  vacuum_count: number;
  analyze_count: number;
  n_dead_tup: number;
}
const stats = async (table: string): Promise<TableStats> => {
  const [row]: TableStats[] = await h.db.orm.em
    .getConnection()
    .execute(
      'select vacuum_count::int, analyze_count::int, n_dead_tup::int from pg_stat_user_tables where relname = ?',
      [table],
    );
  return row as TableStats;
};

describe.runIf(onPostgres)('vacuuming the churning tables', () => {
  it('vacuums the change marks again and again (and analyzes them once) when the server does not, never when it does', async () => {
    // Every create updates the account's change mark, leaving a dead row version behind.
    for (let i = 0; i < 30; i++) expect((await createJson(h, a.token, { title: `Churn ${i}` })).status).toBe(201);
    const [server]: { setting: string }[] = await h.db.orm.em
      .getConnection()
      .execute(`select current_setting('autovacuum') as setting`);
    const setting = server?.setting;
    const before = await stats('account_change');

    const lines: string[] = [];
    const config = loadConfig({ DATABASE_URL: h.db.url, QUEUE_VACUUM_SECONDS: '0.2' });
    const app = await buildApp(h.db.orm, config, createLogger('info', { write: (line) => lines.push(line) }));
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const after = await stats('account_change');
      const said = lines.some((l) => l.includes('vacuuming the queue tables ourselves'));
      if (setting === 'off') {
        expect(said).toBe(true);
        expect(after.vacuum_count).toBeGreaterThanOrEqual(before.vacuum_count + 2);
        expect(after.n_dead_tup).toBe(0);
        // Their statistics too (the planner's), on the first round and then once a minute: once here.
        expect(after.analyze_count).toBe(before.analyze_count + 1);
      } else {
        expect(said).toBe(false);
        expect(after.vacuum_count).toBe(before.vacuum_count);
      }
      expect(lines.filter((l) => l.includes('vacuuming the queue tables failed'))).toEqual([]);
    } finally {
      app.drain();
    }
  });
});
