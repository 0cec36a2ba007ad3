import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'tests/**/*.test.ts'],
    exclude: ['tests/e2e/**', 'node_modules/**', 'bench/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // PANTHEON_TEST_REPORT: another JSON report path (CI's Node 24 part, scripts/test-mutations.mjs)
    reporters: ['default', ['json', { outputFile: process.env.PANTHEON_TEST_REPORT ?? 'out/test-results/unit.json' }]],
  },
});
