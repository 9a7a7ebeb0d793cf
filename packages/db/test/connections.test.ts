import { describe, expect, it } from 'vitest';
import { openOrm } from '../src/index.ts';
import { runPrepared } from '../src/repositories/prepared.ts';

const serverUrl = process.env.DATABASE_URL;
// Behind a transaction-mode pooler (npm run test:pgbouncer) a backend's pid says nothing of our
// connection: each statement may run on another server connection.
const direct = serverUrl && process.env.DB_NAMED_STATEMENTS !== 'false' ? serverUrl : undefined;
if (!direct) {
  console.warn(
    'connections.test.ts: skipped: it tells connections apart by their backend, so it needs PostgreSQL itself (DATABASE_URL, no pooler)',
  );
}

const backend = { name: 'test_backend_pid', text: 'select pg_backend_pid() as pid' };
const divide = { name: 'test_divide', text: 'select 1 / $1::int as n' };
const quit = { name: 'test_quit', text: 'select pg_terminate_backend(pg_backend_pid())' };

describe('prepared statements on the pool', () => {
  // One connection in the pool, so the backend's pid tells whether it is the same connection.
  it.runIf(direct)('keeps the connection after a statement PostgreSQL refused', async () => {
    const orm = await openOrm({ kind: 'postgres', url: direct as string, poolMax: 1 });
    try {
      const [before] = await runPrepared<{ pid: number }>(orm.em, backend, []);
      for (let i = 0; i < 3; i++) {
        await expect(runPrepared(orm.em, divide, [0])).rejects.toThrow(/division by zero/);
      }
      const [after] = await runPrepared<{ pid: number }>(orm.em, backend, []);
      expect(after?.pid).toBe(before?.pid);
      // Its prepared statements are still there: the refused one runs again with a good value.
      await expect(runPrepared(orm.em, divide, [1])).resolves.toEqual([{ n: 1 }]);
    } finally {
      await orm.close();
    }
  });

  it.runIf(direct)('drops a connection that broke, and the next statement gets a new one', async () => {
    const orm = await openOrm({ kind: 'postgres', url: direct as string, poolMax: 1 });
    try {
      const [before] = await runPrepared<{ pid: number }>(orm.em, backend, []);
      await expect(runPrepared(orm.em, quit, [])).rejects.toThrow();
      const [after] = await runPrepared<{ pid: number }>(orm.em, backend, []);
      expect(after?.pid).toBeGreaterThan(0);
      expect(after?.pid).not.toBe(before?.pid);
    } finally {
      await orm.close();
    }
  });
});
