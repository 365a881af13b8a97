/**
 * Fault tests on the real executable: `dist/lumen serve` processes that the tests
 * start, kill with SIGKILL, restart and run side by side, each on a database of the
 * test's own (on the server the suite uses, never a shared database). The test
 * process opens the same database through Lumen's own runtime to provision tenants
 * and partners and to check what was stored.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../../src/runtime.js';

export const EXECUTABLE = path.resolve('dist/lumen');
const SERVER_URL = withDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', 'postgres');
export const SECRET_KEY = '22'.repeat(32);
const READY_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 30_000;

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export function requireExecutable(): void {
  if (!existsSync(EXECUTABLE)) throw new Error(`${EXECUTABLE} is missing: run npm run build first`);
}

/** An empty database of the test's own, dropped (with any connection left) at the end. */
export async function createDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `lumen_e2e_${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(SERVER_URL, name),
    async drop() {
      const c = new pg.Client({ connectionString: SERVER_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export { freePort } from '../conformance-support.js';

const temps: string[] = [];
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `lumen-e2e-${prefix}-`));
  temps.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** What `lumen serve` gets in these tests: a clean environment plus the test's settings. */
export function serveEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    DATABASE_URL: databaseUrl,
    LUMEN_DATA_DIR: tempDir('data'),
    LUMEN_ENVIRONMENT: 'test',
    LUMEN_SECRET_KEY: SECRET_KEY,
    LUMEN_ALLOW_LOOPBACK: 'true',
    LUMEN_LOG_LEVEL: 'info',
    LUMEN_INTAKE_CONCURRENCY_PER_KEY: '10000',
    LUMEN_AUTH_FAILURES_PER_MINUTE: '0',
    HOST: '127.0.0.1',
    ...extra,
  };
}

/** One `lumen serve` process. */
export class Lumen {
  private child: ChildProcess | null = null;
  private out = '';
  private exit: Promise<number | string | null> = Promise.resolve(null);
  private exitStatus: number | string | null | undefined;
  /** Every start of this instance, for the figures. */
  starts = 0;

  constructor(
    readonly name: string,
    readonly port: number,
    private env: Record<string, string>,
    /** A shell prefix run before exec (e.g. "ulimit -f 8"). */
    private readonly shellPrefix: string | null = null,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Everything the process wrote (stdout and stderr), across restarts. */
  output(): string {
    return this.out;
  }

  /** Log lines (JSON) with this msg. */
  logLines(msg: string): Record<string, unknown>[] {
    return this.out
      .split('\n')
      .filter((l) => l.startsWith('{') && l.includes(`"msg":${JSON.stringify(msg)}`))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  start(extraEnv: Record<string, string> = {}): void {
    if (this.child && this.exitStatus === undefined) throw new Error(`${this.name} is already running`);
    this.env = { ...this.env, ...extraEnv };
    const env = { ...this.env, PORT: String(this.port) };
    const child = this.shellPrefix
      ? spawn('/bin/sh', ['-c', `${this.shellPrefix}; exec "$0" serve`, EXECUTABLE], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(EXECUTABLE, ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exitStatus = undefined;
    this.starts++;
    child.stdout!.on('data', (chunk: Buffer) => (this.out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.out += chunk.toString()));
    this.exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exitStatus = code ?? signal;
        resolve(code ?? signal);
      }),
    );
  }

  /** Polls /readyz until 200 (bounded); fails at once if the process exits. Returns the ms it took. */
  async waitReady(timeoutMs = READY_TIMEOUT_MS): Promise<number> {
    const started = Date.now();
    for (;;) {
      if (this.exitStatus !== undefined) throw new Error(`${this.name} exited (${String(this.exitStatus)}) before ready:\n${this.out}`);
      const status = await fetch(`${this.base}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
        (res) => res.status,
        () => 0,
      );
      if (status === 200) return Date.now() - started;
      if (Date.now() - started > timeoutMs) throw new Error(`${this.name}: /readyz not 200 after ${timeoutMs} ms (last ${status}):\n${this.out}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** kill -9, and wait until the process is gone. */
  async kill9(): Promise<void> {
    if (!this.child || this.exitStatus !== undefined) throw new Error(`${this.name} is not running`);
    this.child.kill('SIGKILL');
    await this.exit;
  }

  /** SIGTERM (graceful), bounded; a process still there is killed. Returns the exit status. */
  async stop(): Promise<number | string | null> {
    if (!this.child || this.exitStatus !== undefined) return this.exitStatus ?? null;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), EXIT_TIMEOUT_MS)));
    const result = await Promise.race([this.exit, timeout]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.child.kill('SIGKILL');
      await this.exit;
      throw new Error(`${this.name} did not stop within ${EXIT_TIMEOUT_MS} ms of SIGTERM:\n${this.out}`);
    }
    return result;
  }
}

/**
 * The test's own handle on the database through Lumen's runtime (no workers, no HTTP):
 * factories and checks run through the same services and repositories as the service.
 */
export async function openTestRuntime(databaseUrl: string, opts: { migrate?: boolean } = {}): Promise<Runtime> {
  const config = loadConfig(serveEnv(databaseUrl, { LUMEN_LOG_LEVEL: 'silent' }));
  return openRuntime(config, createLogger('silent'), { migrate: opts.migrate ?? true, work: false, poolSize: 4 });
}

/** Polls `check` until it returns a truthy value, within a deadline. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
