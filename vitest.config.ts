import { defineConfig } from 'vitest/config';

// Under CI a JSON report is written too, so .ci/run can print one closing count over all runs.
const report = process.env.VITEST_JSON_REPORT;

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'infra/test/**/*.test.ts'],
    // On a PostgreSQL server (DATABASE_URL) each file has a database of its own there, and much of
    // the work is the server's: two files at a time (CI's PostgreSQL stage: 866 s one at a time,
    // 606 s two). On PGlite the database runs inside the file's worker: one at a time.
    ...(process.env.DATABASE_URL ? { maxWorkers: 2 } : {}),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: report ? ['default', 'json'] : ['default'],
    ...(report ? { outputFile: { json: report } } : {}),
  },
});
