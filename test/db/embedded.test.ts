/**
 * The embedded database with real processes: one cluster (initdb is the slow
 * part) in a temp dir, opened, shared, stopped, crashed and reopened.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbeddedDatabase, processesIn, type EmbeddedDatabase } from '../../src/db/embedded/index.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'lumen-embedded-'));
const clusterDir = path.join(dataDir, 'postgres');
const messages: string[] = [];
const open = () => openEmbeddedDatabase({ dataDir, log: (msg) => messages.push(msg) });
const opened: EmbeddedDatabase[] = [];

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ one: number }>('SELECT 1 AS one');
    return rows[0]!.one;
  } finally {
    await client.end();
  }
}

function postmasterPid(): number {
  return Number(readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** Polls until no process works in the cluster directory (bounded). */
async function expectNoServer(): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await processesIn(clusterDir)).length > 0) {
    if (Date.now() > deadline) throw new Error(`processes still in ${clusterDir}: ${(await processesIn(clusterDir)).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

afterAll(async () => {
  for (const db of opened) await db.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('embedded PostgreSQL', { timeout: 60_000 }, () => {
  it('initialises, serves, is shared, stops, and survives a crash', async () => {
    const first = await open();
    opened.push(first);
    expect(first.owned).toBe(true);
    expect(first.url).toMatch(/^postgres:\/\/postgres:[A-Za-z0-9_-]{43}@127\.0\.0\.1:\d+\/lumen$/);
    expect(await selectOne(first.url)).toBe(1);
    expect(messages.some((m) => m.startsWith('initialising'))).toBe(true);

    // A second opener (the CLI while `lumen serve` runs) uses the same server.
    const second = await open();
    expect(second).toMatchObject({ owned: false, url: first.url });
    await second.stop();
    expect(await selectOne(first.url)).toBe(1);

    await first.stop();
    await expectNoServer();

    // Restart on the same port; then a crash: kill -9 leaves a stale postmaster.pid.
    const third = await open();
    opened.push(third);
    expect(third).toMatchObject({ owned: true, url: first.url });
    process.kill(postmasterPid(), 'SIGKILL');
    await expectNoServer();

    const fourth = await open();
    opened.push(fourth);
    expect(fourth).toMatchObject({ owned: true, url: first.url });
    expect(await selectOne(fourth.url)).toBe(1);
    expect(messages.filter((m) => m.startsWith('initialising'))).toHaveLength(1);
  });

  it('adopts a server whose owner is gone', async () => {
    // An owner that died without stopping its server: the state file names a
    // process that is not the postmaster's parent.
    const stateFile = path.join(dataDir, 'embedded-postgres.json');
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { port: number; ownerPid: number };
    writeFileSync(stateFile, JSON.stringify({ ...state, ownerPid: 999_999_999 }));
    const adopted = await open();
    opened.push(adopted);
    expect(adopted.owned).toBe(true);
    await adopted.stop();
    await expectNoServer();
  });

  it('requires the password kept in the data directory, readable by its owner only', async () => {
    const db = await open();
    opened.push(db);
    const file = path.join(dataDir, 'postgres-password');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const password = readFileSync(file, 'utf8').trim();
    expect(new URL(db.url).password).toBe(password);
    const port = new URL(db.url).port;
    const refused = async (url: string) => {
      const err = await selectOne(url).catch((e: unknown) => e);
      expect(err, url).toBeInstanceOf(Error);
      return err as Error & { code?: string };
    };
    // No password, a wrong one, another user: refused (28P01 or no password offered).
    expect((await refused(`postgres://postgres@127.0.0.1:${port}/lumen`)).message).toMatch(/password/);
    expect((await refused(`postgres://postgres:wrong@127.0.0.1:${port}/lumen`)).code).toBe('28P01');
    expect(readFileSync(path.join(clusterDir, 'pg_hba.conf'), 'utf8')).not.toMatch(/\btrust\b/);
    await db.stop();
    await expectNoServer();
  });

  it('gives a cluster of an earlier release, which trusted every local user, the password on its next start', async () => {
    // What an earlier release left: trust in pg_hba.conf, no password file, no role password.
    const hbaFile = path.join(clusterDir, 'pg_hba.conf');
    writeFileSync(hbaFile, '# TYPE  DATABASE  USER  ADDRESS       METHOD\nhost    all       all   127.0.0.1/32  trust\n');
    rmSync(path.join(dataDir, 'postgres-password'));
    const before = await open();
    opened.push(before);
    const port = new URL(before.url).port;
    // Upgraded on that start: the new password works, none at all does not.
    expect(readFileSync(hbaFile, 'utf8')).toMatch(/scram-sha-256/);
    expect(readFileSync(hbaFile, 'utf8')).not.toMatch(/\btrust\b/);
    expect(await selectOne(before.url)).toBe(1);
    const err = await selectOne(`postgres://postgres@127.0.0.1:${port}/lumen`).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    await before.stop();
    await expectNoServer();
    // And after a restart too.
    const after = await open();
    opened.push(after);
    expect(await selectOne(after.url)).toBe(1);
    await after.stop();
    await expectNoServer();
  });
});
