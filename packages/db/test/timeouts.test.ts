import { describe, expect, it } from 'vitest';
import { openOrm } from '../src/index.ts';

const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) {
  console.warn(
    'timeouts.test.ts: skipped: statement_timeout is a PostgreSQL server setting; set DATABASE_URL (CI runs it against the server)',
  );
}

describe('statement timeout', () => {
  // Only a PostgreSQL server has one (embedded PGlite runs in-process); CI runs this file against the server.
  it.runIf(serverUrl)('cancels a statement that runs longer than the configured limit', async (ctx) => {
    const orm = await openOrm({ kind: 'postgres', url: serverUrl as string, statementTimeoutMs: 200 });
    try {
      const [setting] = (await orm.em.getConnection().execute('show statement_timeout')) as {
        statement_timeout: string;
      }[];
      // A pooler in transaction mode drops connect-time settings; there the timeout is the role's
      // or the pooler's (infra/README.md), not this connection's.
      if (setting?.statement_timeout !== '200ms')
        ctx.skip('behind a transaction-mode pooler: connect-time settings do not apply');
      const started = performance.now();
      await expect(orm.em.getConnection().execute('select pg_sleep(2)')).rejects.toThrow(/statement timeout/);
      expect(performance.now() - started).toBeLessThan(1_500);
      await expect(orm.em.getConnection().execute('select 1 as ok')).resolves.toEqual([{ ok: 1 }]);
    } finally {
      await orm.close();
    }
  });
});
