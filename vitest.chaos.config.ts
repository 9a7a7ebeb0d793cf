import { defineConfig } from 'vitest/config';

// The fault tests (npm run chaos): one file at a time, each with its own PostgreSQL server.
const report = process.env.VITEST_JSON_REPORT;

export default defineConfig({
  test: {
    include: ['chaos/**/*.chaos.ts'],
    testTimeout: 15 * 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    reporters: report ? ['default', 'json'] : ['default'],
    ...(report ? { outputFile: { json: report } } : {}),
  },
});
