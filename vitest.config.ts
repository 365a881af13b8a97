import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file has its own database, so files run in parallel safely.
    fileParallelism: true,
    // Files mostly wait on PostgreSQL and loopback servers: two at a time even on two
    // cores (vitest's default, cores − 1, ran them one by one there: 12 minutes, not 6).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
