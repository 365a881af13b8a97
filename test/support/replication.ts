import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, appendFileSync, chownSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

/**
 * A PostgreSQL primary and a streaming replica of it (PostgreSQL's own physical
 * replication), each its own cluster under a temporary directory on a free loopback
 * port, trusting local connections. The machine's PostgreSQL binaries are used
 * (Debian's /usr/lib/postgresql/<major>/bin: the replica is made by pg_basebackup);
 * without them, the embedded runtime's (which ships no pg_basebackup: the replica is
 * then copied between pg_backup_start() and pg_backup_stop(), as pg_basebackup does).
 * As root, every server runs as the `postgres` user, which owns the directories.
 */
export interface ReplicaPair {
  /** A database URL on the primary / on the replica. */
  primaryUrl(database: string): string;
  replicaUrl(database: string): string;
  /** Waits until the replica has replayed everything the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  stop(): Promise<void>;
}

interface Bin {
  dir: string;
  basebackup: boolean;
}

async function findBinaries(): Promise<Bin> {
  const root = '/usr/lib/postgresql';
  // LUMEN_TEST_REPLICATION_RUNTIME=embedded tries the path taken where the machine has no PostgreSQL binaries.
  if (existsSync(root) && process.env.LUMEN_TEST_REPLICATION_RUNTIME !== 'embedded') {
    const majors = readdirSync(root)
      .filter((v) => /^\d+$/.test(v) && existsSync(path.join(root, v, 'bin', 'pg_basebackup')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors.length > 0) return { dir: path.join(root, majors[0]!, 'bin'), basebackup: true };
  }
  const { postgresRuntime } = await import('../../src/lib/assets.js');
  const runtime = await postgresRuntime(path.resolve('.tmp/replication-runtime'), () => {});
  return { dir: runtime.binDir, basebackup: false };
}

const asRoot = process.getuid?.() === 0;

function postgresIds(): { uid: number; gid: number } {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0) throw new Error('running as root needs a system user "postgres" to run PostgreSQL');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function run(bin: Bin, tool: string, args: string[]): string {
  const cmd = path.join(bin.dir, tool);
  const r = asRoot ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' }) : spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${String(r.status)}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

const SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  // Tests only: durability is not what is tested here.
  'fsync = off',
  'full_page_writes = off',
  'wal_level = replica',
  'max_wal_senders = 4',
  'wal_keep_size = 256MB',
  'hot_standby = on',
  'max_connections = 60',
  'shared_buffers = 32MB',
];

async function client(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  return c;
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const bin = await findBinaries();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-replication-'));
  const ids = asRoot ? postgresIds() : null;
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const socketDir = dir;
  const ctl = (data: string, port: number, action: 'start' | 'stop') =>
    action === 'start'
      ? run(bin, 'pg_ctl', ['-D', data, '-w', '-t', '30', '-l', path.join(dir, `${path.basename(data)}.log`), '-o', `-p ${port} -k ${socketDir}`, 'start'])
      : run(bin, 'pg_ctl', ['-D', data, '-w', '-t', '30', '-m', 'fast', 'stop']);
  const url = (port: number, database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;

  run(bin, 'initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-instructions']);
  appendFileSync(path.join(primaryDir, 'postgresql.conf'), `\n${SETTINGS.join('\n')}\n`);
  // initdb's pg_hba trusts replication from loopback with --auth=trust; said again for older majors.
  appendFileSync(path.join(primaryDir, 'pg_hba.conf'), '\nhost replication all 127.0.0.1/32 trust\n');
  ctl(primaryDir, primaryPort, 'start');
  let replicaRunning = false;
  try {
    if (bin.basebackup) {
      run(bin, 'pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '-c', 'fast']);
    } else {
      await copyForReplica(url(primaryPort, 'postgres'), primaryDir, replicaDir, primaryPort, ids);
    }
    ctl(replicaDir, replicaPort, 'start');
    replicaRunning = true;
  } catch (err) {
    for (const log of ['primary.log', 'replica.log']) {
      if (existsSync(path.join(dir, log))) (err as Error).message += `\n${log}: ${readFileSync(path.join(dir, log), 'utf8').slice(-2000)}`;
    }
    try {
      ctl(primaryDir, primaryPort, 'stop');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const pair: ReplicaPair = {
    primaryUrl: (db) => url(primaryPort, db),
    replicaUrl: (db) => url(replicaPort, db),
    async caughtUp(timeoutMs = 10_000) {
      const p = await client(url(primaryPort, 'postgres'));
      const r = await client(url(replicaPort, 'postgres'));
      try {
        const { rows } = await p.query<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn');
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const done = await r.query<{ ok: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [rows[0]!.lsn]);
          if (done.rows[0]!.ok) return;
          if (Date.now() > deadline) throw new Error('the replica did not catch up');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await p.end();
        await r.end();
      }
    },
    async pauseReplay() {
      const r = await client(url(replicaPort, 'postgres'));
      try {
        await r.query('SELECT pg_wal_replay_pause()');
        // Paused once the startup process says so (a record being replayed is finished first).
        const deadline = Date.now() + 10_000;
        while ((await r.query<{ s: string }>('SELECT pg_get_wal_replay_pause_state() AS s')).rows[0]!.s !== 'paused') {
          if (Date.now() > deadline) throw new Error('replay did not pause');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        await r.end();
      }
    },
    async resumeReplay() {
      const r = await client(url(replicaPort, 'postgres'));
      try {
        await r.query('SELECT pg_wal_replay_resume()');
      } finally {
        await r.end();
      }
    },
    async stopReplica() {
      if (!replicaRunning) return;
      ctl(replicaDir, replicaPort, 'stop');
      replicaRunning = false;
    },
    async startReplica() {
      if (replicaRunning) return;
      ctl(replicaDir, replicaPort, 'start');
      replicaRunning = true;
    },
    async stop() {
      for (const [data, port, up] of [
        [replicaDir, replicaPort, replicaRunning],
        [primaryDir, primaryPort, true],
      ] as const) {
        if (!up) continue;
        try {
          ctl(data, port, 'stop');
        } catch {
          // already gone
        }
      }
      replicaRunning = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pair;
}

/** Files a base backup leaves out (PostgreSQL's documentation of the low-level backup). */
const SKIP = new Set(['postmaster.pid', 'postmaster.opts', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']);

/** pg_basebackup without pg_basebackup: the low-level online backup API, then a standby that streams from the primary. */
async function copyForReplica(primaryUrl: string, from: string, to: string, primaryPort: number, ids: { uid: number; gid: number } | null): Promise<void> {
  const c = await client(primaryUrl);
  try {
    await c.query(`SELECT pg_backup_start('replica', true)`);
    await fs.cp(from, to, { recursive: true, filter: (src) => !SKIP.has(path.basename(src)) && !src.startsWith(path.join(from, 'pg_wal') + path.sep) });
    const { rows } = await c.query<{ labelfile: string }>('SELECT labelfile FROM pg_backup_stop(false)');
    writeFileSync(path.join(to, 'backup_label'), rows[0]!.labelfile);
  } finally {
    await c.end();
  }
  for (const d of ['pg_wal', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']) await fs.mkdir(path.join(to, d), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(to, 'standby.signal'), '');
  appendFileSync(path.join(to, 'postgresql.auto.conf'), `\nprimary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres'\n`);
  if (ids) spawnSync('chown', ['-R', `${ids.uid}:${ids.gid}`, to]);
  await fs.chmod(to, 0o700);
}
