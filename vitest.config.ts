import { defineConfig } from 'vitest/config';

// Under CI a JSON report is written too, so .ci/run can print one closing count over all runs.
const report = process.env.VITEST_JSON_REPORT;

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'infra/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: report ? ['default', 'json'] : ['default'],
    ...(report ? { outputFile: { json: report } } : {}),
  },
});
