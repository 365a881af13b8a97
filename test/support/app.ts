import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { startApp, type RunningApp } from '../../src/app.js';
import { runCli } from '../../src/cli/program.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** A fixed key for tests only (never used outside them). */
export const TEST_SECRET_KEY = '11'.repeat(32);

export function testEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    // Blobs and any other local files of a test app stay out of the working tree.
    LUMEN_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'lumen-test-data-')),
    PORT: '0',
    HOST: '127.0.0.1',
    LUMEN_ENVIRONMENT: 'test',
    LUMEN_SECRET_KEY: TEST_SECRET_KEY,
    LUMEN_LOG_LEVEL: 'silent',
    LUMEN_ALLOW_LOOPBACK: 'true',
    LUMEN_VALIDATE_RESPONSES: 'true',
    // Suites send many bad keys from one address; the throttle has a test of its own.
    LUMEN_AUTH_FAILURES_PER_MINUTE: '0',
    // Likewise for failed console sign-ins per address (per account stays on: it is per e-mail).
    LUMEN_SIGN_IN_FAILURES_PER_ADDRESS: '0',
    // Suites send dozens of simultaneous requests from one key; the limit has a test of its own.
    LUMEN_INTAKE_CONCURRENCY_PER_KEY: '10000',
    // Suites change keys and partners by SQL and check the very next request; the
    // in-process key cache follows such a change within the notification's travel time
    // (milliseconds), not before the next request. It has tests of its own
    // (test/integration/partner-key-cache.test.ts, two `lumen serve` processes).
    LUMEN_PARTNER_KEY_CACHE: 'off',
    // Hundreds of operators sign in across the suite: scrypt at N = 2^10 (1 MiB) rather
    // than 2^15 (32 MiB, 70-100 ms of a core each). The test of the cost itself hashes at
    // 15 too (test/operators/password-cost.test.ts), the sign-in flood runs at 15
    // (test/reliability/floods.test.ts), and roles.test.ts checks the stored format at the
    // configured cost.
    LUMEN_PASSWORD_COST: '10',
    ...extra,
  };
}

/** Collects log lines so a test can assert on them (for example: no secrets). */
export class LogSink extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    cb();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export interface TestApp {
  readonly db: TestDatabase;
  readonly rt: Runtime;
  readonly app: RunningApp;
  readonly baseUrl: string;
  readonly logs: LogSink;
  readonly env: Record<string, string>;
  fetch(path: string, init?: RequestInit & { apiKey?: string; json?: unknown }): Promise<Response>;
  cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  stop(): Promise<void>;
}

/** The whole service (HTTP, jobs) on a fresh database of its own, on a free loopback port. */
export async function startTestApp(opts: { env?: Record<string, string>; db?: TestDatabase } = {}): Promise<TestApp> {
  const db = opts.db ?? (await createTestDatabase());
  const env = testEnv(db.url, opts.env);
  const logs = new LogSink();
  const config = loadConfig(env);
  const log = createLogger(env.LUMEN_TEST_LOG_LEVEL ?? 'info', logs);
  // The pool as the service sizes it (LUMEN_DB_POOL_SIZE, default 6), so the suite runs what ships.
  const rt = await openRuntime(config, log, { migrate: false, work: true });
  const app = await startApp(rt);
  const baseUrl = `http://127.0.0.1:${app.address.port}`;
  return {
    db,
    rt,
    app,
    baseUrl,
    logs,
    env,
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.apiKey) headers.set('x-api-key', init.apiKey);
      let body = init.body;
      if (init.json !== undefined) {
        body = JSON.stringify(init.json);
        if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      }
      return fetch(`${baseUrl}${path}`, { ...init, headers, body });
    },
    cli: (...argv) => cli(env, ...argv),
    async stop() {
      await app.stop();
      if (!opts.db) await db.drop();
    },
  };
}

/** A CLI run that must succeed with --json: exactly one JSON object on stdout, nothing on stderr. */
export function cliJson(out: { code: number; stdout: string; stderr: string }): Record<string, any> {
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  const lines = out.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, any>;
}

/** Runs one CLI invocation in-process and captures its output. */
export async function cli(env: Record<string, string>, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new LogSink();
  const err = new LogSink();
  const code = await runCli(argv, { env, stdout: out, stderr: err });
  return { code, stdout: out.lines.join('\n'), stderr: err.lines.join('\n') };
}

/** A secret in a file of its own (mode 600), for the CLI's `--…-file` options (a secret on the command line prints a warning). */
export function secretFile(secret: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-secret-')), 'secret');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return file;
}
