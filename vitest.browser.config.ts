import { defineConfig } from 'vitest/config';

/**
 * The console in a real browser (`npm run test:browser`): playwright-core drives the
 * machine's Chromium (Debian's headless shell, else its full browser; nothing is downloaded)
 * against `dist/lumen` when it is built, else the app started in-process. Each file
 * gets its own database from the template (test/global-setup.ts). One file at a
 * time: a browser is heavy on a small machine.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    expect: { poll: { timeout: 10_000 } },
  },
});
