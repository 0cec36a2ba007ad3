// The end-to-end suite: Chromium (playwright-core) against the built renderer, with an in-page fake
// of the API (tests/e2e/ui-*.e2e.test.ts) and against the dev harness's real engine (app.e2e.test.ts).
// Run: npx vitest run --config vitest.e2e.config.ts
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/e2e/**/*.e2e.test.ts'],
    // Builds out/renderer once (vite.renderer.config.ts).
    globalSetup: ['tests/e2e/build-renderer.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One browser at a time: the machine has two cores.
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default', ['json', { outputFile: 'out/test-results/e2e.json' }]],
  },
});
