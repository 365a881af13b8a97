/**
 * Smoke test of the single executable (run after `npm run build`): dist/lumen is
 * started as a user would, from a fresh empty folder, with a clean environment.
 *   - on a fresh database given by DATABASE_URL: migrate, provision, serve, auth;
 *   - with no DATABASE_URL: serve on the embedded PostgreSQL, which stops with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, EXECUTABLE, freePort, runLumen, withDatabase } from './conformance-support.js';

const ADMIN_URL = withDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', 'postgres');
const READY_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 30_000;

const temps: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `lumen-e2e-${prefix}-`));
  temps.push(dir);
  return dir;
}

/** Runs a `--json` command: exit 0 and exactly one JSON object on stdout. */
async function runJson(args: string[], cwd: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const result = await runLumen(args, cwd, env);
  expect(result, result.stderr).toMatchObject({ code: 0 });
  const lines = result.stdout.trim().split('\n');
  expect(lines, result.stdout).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

interface Server {
  child: ChildProcess;
  base: string;
  output: () => string;
  exited: Promise<number | null>;
}

function serve(cwd: string, env: Record<string, string>, port: number): Server {
  const child = spawn(EXECUTABLE, ['serve'], { cwd, env: cleanEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' }), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, base: `http://127.0.0.1:${port}`, output: () => output, exited };
}

/** Polls /readyz until 200, within a deadline; fails early if the server exits. */
async function waitReady(server: Server): Promise<number> {
  const started = Date.now();
  let exitCode: number | null | undefined;
  void server.exited.then((code) => (exitCode = code));
  for (;;) {
    if (exitCode !== undefined) throw new Error(`lumen serve exited (${String(exitCode)}) before ready:\n${server.output()}`);
    const status = await fetch(`${server.base}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return Date.now() - started;
    if (Date.now() - started > READY_TIMEOUT_MS) throw new Error(`/readyz not 200 after ${READY_TIMEOUT_MS} ms (last ${status}):\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(server: Server): Promise<number | null> {
  server.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`lumen serve did not exit ${EXIT_TIMEOUT_MS} ms after SIGTERM:\n${server.output()}`)), EXIT_TIMEOUT_MS);
  });
  try {
    return await Promise.race([server.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Processes working in, or started with, the given directory (the embedded server and its children). */
function processesUsing(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cwd.startsWith(dir) || cmdline.includes(dir)) found.push(`${pid}: ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

beforeAll(() => {
  if (!existsSync(EXECUTABLE)) throw new Error(`${EXECUTABLE} is missing: run npm run build first`);
});

afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

describe('dist/lumen', () => {
  it('prints its version and the embedded Node runtime', async () => {
    const result = await runLumen(['--version'], tempDir('version'), {});
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^lumen 0\.1\.0 \(node v24\.\d+\.\d+\)$/);
  });

  describe('on a database given by DATABASE_URL', () => {
    const database = `lumen_e2e_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: ADMIN_URL });

    beforeAll(async () => {
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
    });

    afterAll(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    });

    it('migrates, provisions a partner, serves and authenticates it, stops on SIGTERM', async () => {
      const cwd = tempDir('url');
      const env = { DATABASE_URL: withDatabase(ADMIN_URL, database) };

      const migrated = await runLumen(['migrate'], cwd, env);
      expect(migrated, migrated.stderr).toMatchObject({ code: 0 });

      const tenant = await runJson(['tenant', 'create', '--name', 'E2E City', '--ibge', '3550308', '--json'], cwd, env);
      expect(tenant.id).toEqual(expect.any(String));
      const partner = await runJson(['partner', 'create', '--tenant', String(tenant.id), '--code', 'e2e', '--scopes', 'canReadCityData', '--json'], cwd, env);
      expect(partner.apiKey).toEqual(expect.any(String));

      const server = serve(cwd, env, await freePort());
      try {
        await waitReady(server);
        const health = await fetch(`${server.base}/api/external/health`, { headers: { 'X-Api-Key': String(partner.apiKey) } });
        expect(health.status).toBe(200);
        expect(await health.json()).toMatchObject({ externalSystemCode: 'e2e' });

        const anonymous = await fetch(`${server.base}/api/external/health`);
        expect(anonymous.status).toBe(401);
        expect(anonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      } finally {
        expect(await stop(server), server.output()).toBe(0);
      }
    });
  });

  it('serves on the embedded database without DATABASE_URL, and stops it on SIGTERM', async () => {
    const cwd = tempDir('embedded-cwd');
    const dataDir = path.join(tempDir('embedded-data'), 'data');
    const env = { LUMEN_DATA_DIR: dataDir };

    const server = serve(cwd, env, await freePort());
    try {
      const readyMs = await waitReady(server);
      process.stdout.write(`embedded first start: /readyz 200 after ${readyMs} ms\n`);
      expect(processesUsing(dataDir).length).toBeGreaterThan(0);

      // The demo operator printed beside the demo key signs in with its one-time password.
      const printed = /e-mail (\S+), password \(shown once\): (\S+)/.exec(server.output());
      expect(printed, server.output()).not.toBeNull();
      const signIn = await fetch(`${server.base}/api/admin/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: printed![1], password: printed![2] }) });
      expect(signIn.status).toBe(200);
      expect(((await signIn.json()) as { operator: { grants: { role: string }[] } }).operator.grants).toEqual([expect.objectContaining({ role: 'city-admin' })]);

      // The CLI reaches the same data while serve runs, and leaves the server up.
      const tenants = await runJson(['tenant', 'list', '--json'], cwd, env);
      expect(tenants.tenants).toEqual(expect.any(Array));
      expect((await fetch(`${server.base}/readyz`)).status).toBe(200);
    } finally {
      expect(await stop(server), server.output()).toBe(0);
    }
    // stop() waited for the embedded server to exit: nothing may be left behind.
    expect(processesUsing(dataDir)).toEqual([]);
  });

  it('in production on the embedded database (opted in): no demo city and no key printed; the database needs its password', async () => {
    const cwd = tempDir('production-cwd');
    const dataDir = path.join(tempDir('production-data'), 'data');
    const env = { LUMEN_DATA_DIR: dataDir, LUMEN_ENVIRONMENT: 'production', LUMEN_EMBEDDED_IN_PRODUCTION: 'true', LUMEN_SECRET_KEY: '33'.repeat(32), LUMEN_PUBLIC_URL: 'https://lumen.city.example' };
    const refused = await runLumen(['serve'], cwd, { ...env, LUMEN_EMBEDDED_IN_PRODUCTION: 'false' });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/production needs DATABASE_URL/);

    const server = serve(cwd, env, await freePort());
    try {
      await waitReady(server);
      const tenants = await runJson(['tenant', 'list', '--json'], cwd, env);
      expect(tenants.tenants).toEqual([]);
      expect(server.output()).not.toMatch(/lmn_(live|test)_/);
      expect(server.output()).not.toMatch(/demo@lumen\.local|password \(shown once\)/);
      expect(statSync(path.join(dataDir, 'postgres-password')).mode & 0o777).toBe(0o600);
    } finally {
      expect(await stop(server), server.output()).toBe(0);
    }
  });
});
