/**
 * The machine's Chromium through playwright-core (nothing downloaded), as the console's
 * browser tests drive it (test/browser/support/browser.ts): LUMEN_CHROMIUM, else
 * Debian's /usr/bin/chromium, else `chromium` on PATH.
 */
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { findExecutable } from './tools.js';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium to drive, or null. A LUMEN_CHROMIUM that is not executable counts as none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.LUMEN_CHROMIUM) return executable(env.LUMEN_CHROMIUM) ? env.LUMEN_CHROMIUM : null;
  if (executable('/usr/bin/chromium')) return '/usr/bin/chromium';
  return findExecutable('chromium', env) ?? findExecutable('chromium-browser', env);
}

export function launchChromium(executablePath: string): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}
