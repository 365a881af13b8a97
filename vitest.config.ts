import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Files that need a module graph of their own: they replace a module (vi.mock) that
 * every other file has already loaded. Every other file shares its worker's modules
 * with the files before it (isolate: false): each file still has its own database,
 * its own app and its own servers, and stops them in afterAll; importing the app
 * anew for each of 180 files was a third of the suite's CPU on a 2-core machine.
 */
const ISOLATED = ['test/security/key-check.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file has its own database, so files run in parallel safely.
    fileParallelism: true,
    // Files mostly wait on PostgreSQL and loopback servers: two at a time even on two
    // cores (vitest's default, cores − 1, ran them one by one there: 12 minutes, not 6).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ['test/e2e/**', 'test/browser/**', 'node_modules/**', ...ISOLATED], isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
      // The console in a real browser: a day's flow per test, and a page waited for as a
      // person would (a poll gives up after 10 s, not 1 s, on a machine busy with two
      // browsers and their servers), as in vitest.browser.config.ts.
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], isolate: false, testTimeout: 120_000, hookTimeout: 120_000, expect: { poll: { timeout: 10_000 } } } },
    ],
  },
});
