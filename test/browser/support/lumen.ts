/**
 * The Lumen a browser test talks to, on a database of the test file's own: the built
 * executable (`dist/lumen serve`, as in CI after `npm run build`) when it exists, else
 * the app started in-process from the sources. LUMEN_BROWSER_TARGET=in-process forces
 * the latter (a stale dist/lumen while developing). The setup's CLI commands run
 * in-process either way, on the same database: the executable's own CLI is the e2e
 * suite's (test/e2e), and a new process per command cost a browser file 5-15 s.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { EXECUTABLE, startLumen } from '../../e2e/conformance-support.js';
import { loadConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/lib/logger.js';
import { openRuntime } from '../../../src/runtime.js';
import { detectLampOuts } from '../../../src/services/telemetry-alerts/index.js';
import { cli, startTestApp, testEnv, cliJson } from '../../support/app.js';
import { createTestDatabase } from '../../support/database.js';

export interface Lumen {
  readonly baseUrl: string;
  readonly target: 'executable' | 'in-process';
  /** The test file's own database, for a state no operator can reach by hand (an order past its deadline). */
  readonly databaseUrl: string;
  /** A `--json` CLI command; its one JSON object. */
  cli(...args: string[]): Promise<Record<string, any>>;
  /**
   * The telemetry lamp-out rule run now, as its minute job runs it, on this database
   * (test/browser/duplicates.test.ts waits for the job itself).
   */
  lampOutRuleNow(): Promise<{ raised: number; noted: number }>;
  /** A call of the admin API with a token. */
  admin(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/**
 * Tiles from a loopback port nothing listens on: the map must work with no basemap
 * (a closed network), and no test ever reaches the public tile servers.
 */
export const UNREACHABLE_TILES = 'http://127.0.0.1:9/{z}/{x}/{y}.png';

export async function startLumenForBrowser(extra: Record<string, string> = {}): Promise<Lumen> {
  const db = await createTestDatabase();
  const env = { ...testEnv(db.url), LUMEN_MAP_TILE_URL: UNREACHABLE_TILES, LUMEN_WEBHOOK_RETRY_SCHEDULE: '200ms', ...extra };
  const lampOutRuleNow = async () => {
    const rt = await openRuntime(loadConfig(env), createLogger('silent'), { migrate: false, work: false });
    try {
      return await detectLampOuts(rt);
    } finally {
      await rt.close();
    }
  };
  const useExecutable = process.env.LUMEN_BROWSER_TARGET !== 'in-process' && existsSync(EXECUTABLE);
  const admin = async (baseUrl: string, token: string, method: string, p: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  if (useExecutable) {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'lumen-browser-'));
    const server = await startLumen(cwd, env);
    return {
      baseUrl: server.base,
      target: 'executable',
      databaseUrl: db.url,
      cli: async (...args) => cliJson(await cli(env, ...args, '--json')),
      lampOutRuleNow,
      admin: (token, method, p, body) => admin(server.base, token, method, p, body),
      async stop() {
        await server.stop();
        await db.drop();
      },
    };
  }
  const app = await startTestApp({ db, env });
  return {
    baseUrl: app.baseUrl,
    target: 'in-process',
    databaseUrl: db.url,
    cli: async (...args) => cliJson(await cli(env, ...args, '--json')),
    lampOutRuleNow,
    admin: (token, method, p, body) => admin(app.baseUrl, token, method, p, body),
    async stop() {
      await app.stop();
      await db.drop();
    },
  };
}

export { expect };
