import { defineConfig } from 'vitest/config';

/**
 * The executable smoke test (`npm run test:e2e`, after `npm run build`): runs
 * dist/lumen itself, from an empty folder, against a real database. No global
 * setup: the test makes and drops its own database.
 */
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
