/**
 * lumen backup / lumen restore on the embedded database, with real processes: an
 * online backup while the server runs and writes go on, a restore into another data
 * directory, and the refusals that protect a live or existing database.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { createTenant, listAllTenants } from '../../src/services/tenants/index.js';
import { cli } from '../support/app.js';

/** A command that succeeds with --json: one JSON object on stdout; progress lines may go to stderr. */
function jsonOut(out: { code: number; stdout: string; stderr: string }): Record<string, any> {
  expect(out.code, out.stderr).toBe(0);
  const lines = out.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, any>;
}

const root = mkdtempSync(path.join(tmpdir(), 'lumen-backup-'));
const source = path.join(root, 'source');
const target = path.join(root, 'target');
// No DATABASE_URL: the embedded database of each data directory. No LUMEN_SECRET_KEY:
// the key file in the data directory must travel with the backup.
const envOf = (dataDir: string) => ({ LUMEN_DATA_DIR: dataDir, LUMEN_ENVIRONMENT: 'test', LUMEN_LOG_LEVEL: 'silent', PATH: process.env.PATH ?? '' });
const open = (dataDir: string) => openRuntime(loadConfig(envOf(dataDir)), createLogger('silent'), { migrate: true, work: false, poolSize: 4 });

let live: Runtime | null = null;
afterAll(async () => {
  await live?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('lumen backup and lumen restore (embedded database)', { timeout: 120_000 }, () => {
  let backupDir = '';

  beforeAll(async () => {
    live = await open(source);
    await createTenant(live, { name: 'Before the backup' });
  });

  it('takes an online backup while the server runs and writes go on', async () => {
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await createTenant(live!, { name: `During the backup ${written}` });
        written++;
      }
    })();
    let out: Record<string, any>;
    try {
      out = jsonOut(await cli(envOf(source), 'backup', '--json'));
    } finally {
      writing = false;
      await writer;
    }
    backupDir = out.dir as string;
    expect(path.dirname(backupDir)).toBe(path.join(source, 'backups'));
    expect(out).toMatchObject({ format: 1, postgresMajor: expect.stringMatching(/^\d+$/), files: expect.any(Number) });
    expect(readdirSync(path.join(backupDir, 'postgres', 'pg_wal')).some((f) => /^[0-9A-F]{24}$/.test(f))).toBe(true);
    expect(written).toBeGreaterThan(0);
    await createTenant(live!, { name: 'After the backup' });
  });

  it('refuses to restore while the server runs there, or over an existing database without --force', async () => {
    const running = await cli(envOf(source), 'restore', '--from', backupDir);
    expect(running.code).toBe(2);
    expect(running.stderr).toMatch(/is running/);
    await live!.close();
    live = null;
    const existing = await cli(envOf(source), 'restore', '--from', backupDir);
    expect(existing.code).toBe(2);
    expect(existing.stderr).toMatch(/already holds a database/);
    const notABackup = await cli(envOf(target), 'restore', '--from', root);
    expect(notABackup.code).toBe(2);
  });

  it('restores into another data directory: what was committed before the backup ended, nothing after', async () => {
    const restored = jsonOut(await cli(envOf(target), 'restore', '--from', backupDir, '--json'));
    expect(restored).toMatchObject({ dataDir: target, movedAside: null });
    live = await open(target);
    const names = (await listAllTenants(live)).map((t) => t.name);
    expect(names).toContain('Before the backup');
    expect(names).not.toContain('After the backup');
    // Writes committed while the copy ran are in, in a consistent database that takes new writes.
    expect(names.filter((n) => n.startsWith('During the backup')).length).toBeGreaterThan(0);
    await createTenant(live, { name: 'After the restore' });
    await live.close();
    live = null;
  });

  it('--force moves the current data directory aside instead of deleting it', async () => {
    const forced = jsonOut(await cli(envOf(target), 'restore', '--from', backupDir, '--force', '--json'));
    expect(forced.movedAside).toMatch(/target\.before-restore-/);
    const aside = await open(forced.movedAside as string);
    expect((await listAllTenants(aside)).map((t) => t.name)).toContain('After the restore');
    await aside.close();
  });

  it('points to the server’s own tools when DATABASE_URL is set', async () => {
    const r = await cli({ ...envOf(source), DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' }, 'backup');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/pg_dump/);
  });
});
