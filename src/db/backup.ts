/**
 * Backup and restore of the embedded database (`lumen backup`, `lumen restore`).
 *
 * A backup is PostgreSQL's own online physical backup, taken while the server runs:
 * `pg_backup_start()`, a copy of the cluster's files, `pg_backup_stop()`, whose
 * `backup_label` is written into the copy, and the WAL segments from the backup's start
 * to its end. On the first start of a restored copy PostgreSQL replays that WAL and the
 * cluster is exactly as it was when the backup ended: the same engine and mechanism as
 * pg_basebackup, for a runtime that ships no client tools. The rest of the data
 * directory (the secret key, the local blobs, the embedded server's state and password)
 * is copied beside it; the extracted PostgreSQL runtime and earlier backups are not.
 *
 * A backup restores into the same PostgreSQL major version (the runtime of this Lumen
 * release). For a database given by DATABASE_URL, use that server's own tools.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { VERSION } from '../version.js';

/** Cluster paths PostgreSQL documents as safe to leave out of a base backup (their content is rebuilt or useless). */
const CLUSTER_SKIP = new Set(['postmaster.pid', 'postmaster.opts', 'pg_wal', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans', 'backup_label', 'tablespace_map']);
/** Data-directory entries a backup leaves out: the cluster (copied on its own terms), the extracted runtime, backups. */
const DATA_DIR_SKIP = new Set(['postgres', 'runtime', 'backups']);
const MANIFEST = 'lumen-backup.json';

export interface BackupManifest {
  readonly format: 1;
  readonly lumenVersion: string;
  readonly createdAt: string;
  /** PostgreSQL major version of the cluster (PG_VERSION). */
  readonly postgresMajor: string;
  readonly startWalFile: string;
  readonly stopLsn: string;
  /** Owner of the cluster directory when the backup was taken (restored as it was). */
  readonly owner: { readonly uid: number; readonly gid: number };
  readonly files: number;
  readonly bytes: number;
}

type Progress = (msg: string) => void;

interface Copied {
  files: number;
  bytes: number;
}

/** Copies a tree; files that vanish while it runs (temporary files of a live server) are skipped. */
async function copyTree(from: string, to: string, skip: (name: string, depth: number) => boolean, counts: Copied, depth = 0): Promise<void> {
  await fs.mkdir(to, { recursive: true, mode: 0o700 });
  const entries = await fs.readdir(from, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  for (const e of entries) {
    if (skip(e.name, depth)) continue;
    const src = path.join(from, e.name);
    const dst = path.join(to, e.name);
    if (e.isDirectory()) {
      await copyTree(src, dst, () => false, counts, depth + 1);
    } else if (e.isFile()) {
      try {
        await fs.copyFile(src, dst);
        counts.files++;
        counts.bytes += (await fs.stat(dst)).size;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }
}

function timestamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/**
 * Takes an online backup of the embedded cluster under `dataDir`, whose server answers
 * at `url`, into a new folder under `to`; returns the folder. A failure removes the
 * partial folder and ends the backup on the server.
 */
export async function backupEmbedded(opts: { dataDir: string; url: string; to: string; progress: Progress; now?: Date }): Promise<{ dir: string; manifest: BackupManifest }> {
  const clusterDir = path.join(opts.dataDir, 'postgres');
  const created = opts.now ?? new Date();
  const dir = path.join(path.resolve(opts.to), `lumen-backup-${timestamp(created)}`);
  await fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  await fs.mkdir(dir, { mode: 0o700 });
  const client = new pg.Client({ connectionString: opts.url, application_name: 'lumen-backup' });
  client.on('error', () => {}); // a failure reaches the awaited call; an idle connection's last words must not end the process
  await client.connect();
  let started = false;
  try {
    const owner = await fs.stat(clusterDir);
    const postgresMajor = (await fs.readFile(path.join(clusterDir, 'PG_VERSION'), 'utf8')).trim();
    opts.progress('starting the backup (checkpoint)');
    await client.query(`SELECT pg_backup_start($1, true)`, [`lumen ${timestamp(created)}`]);
    started = true;

    const counts: Copied = { files: 0, bytes: 0 };
    opts.progress('copying the cluster files');
    await copyTree(clusterDir, path.join(dir, 'postgres'), (name, depth) => depth === 0 && CLUSTER_SKIP.has(name), counts);
    for (const empty of ['pg_wal/archive_status', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']) {
      await fs.mkdir(path.join(dir, 'postgres', empty), { recursive: true, mode: 0o700 });
    }

    const stop = await client.query<{ lsn: string; labelfile: string; spcmapfile: string | null; stop_file: string }>(
      `SELECT s.lsn::text AS lsn, s.labelfile, s.spcmapfile, pg_walfile_name(s.lsn) AS stop_file FROM pg_backup_stop(true) s`,
    );
    started = false;
    const { lsn, labelfile, spcmapfile, stop_file: stopFile } = stop.rows[0]!;
    await fs.writeFile(path.join(dir, 'postgres', 'backup_label'), labelfile, { mode: 0o600 });
    if (spcmapfile) await fs.writeFile(path.join(dir, 'postgres', 'tablespace_map'), spcmapfile, { mode: 0o600 });

    // The WAL from the backup's start to its end: what the first start of the copy replays.
    const startFile = /START WAL LOCATION: \S+ \(file ([0-9A-F]{24})\)/.exec(labelfile)?.[1];
    if (!startFile) throw new Error('backup_label names no start WAL file');
    opts.progress(`copying the WAL ${startFile} .. ${stopFile}`);
    const walDir = path.join(clusterDir, 'pg_wal');
    const segments = (await fs.readdir(walDir)).filter((f) => /^[0-9A-F]{24}$/.test(f) && f >= startFile && f <= stopFile).sort();
    if (segments[0] !== startFile || segments[segments.length - 1] !== stopFile) throw new Error(`the WAL of the backup is no longer complete in ${walDir} (found ${segments.join(', ') || 'none'})`);
    for (const f of segments) {
      await fs.copyFile(path.join(walDir, f), path.join(dir, 'postgres', 'pg_wal', f));
      counts.files++;
      counts.bytes += (await fs.stat(path.join(walDir, f))).size;
    }

    opts.progress('copying the rest of the data directory (secret key, blobs, server state)');
    await copyTree(opts.dataDir, dir, (name, depth) => depth === 0 && (DATA_DIR_SKIP.has(name) || path.join(opts.dataDir, name) === path.resolve(opts.to)), counts);

    const manifest: BackupManifest = {
      format: 1,
      lumenVersion: VERSION,
      createdAt: created.toISOString(),
      postgresMajor,
      startWalFile: startFile,
      stopLsn: lsn,
      owner: { uid: owner.uid, gid: owner.gid },
      files: counts.files,
      bytes: counts.bytes,
    };
    await fs.writeFile(path.join(dir, MANIFEST), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
    return { dir, manifest };
  } catch (err) {
    if (started) await client.query('SELECT pg_backup_stop(false)').catch(() => {});
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  } finally {
    await client.end().catch(() => {});
  }
}

export class RestoreRefused extends Error {}

/** Reads and checks a backup folder's manifest. */
export async function readBackup(dir: string): Promise<BackupManifest> {
  const text = await fs.readFile(path.join(dir, MANIFEST), 'utf8').catch(() => {
    throw new RestoreRefused(`${dir} is not a Lumen backup (no ${MANIFEST})`);
  });
  const manifest = JSON.parse(text) as BackupManifest;
  if (manifest.format !== 1) throw new RestoreRefused(`${dir}: unsupported backup format ${String(manifest.format)}`);
  if (!(await fs.stat(path.join(dir, 'postgres', 'backup_label')).catch(() => null))) throw new RestoreRefused(`${dir}: the cluster copy has no backup_label`);
  return manifest;
}

/**
 * Restores a backup folder into `dataDir`, which must hold no cluster (or, with
 * `force`, whose current content is first moved aside to `<dataDir>.before-restore-<time>`,
 * never deleted). The server must not be running there: the caller checks that.
 * PostgreSQL replays the backup's WAL on the next start.
 */
export async function restoreEmbedded(opts: { from: string; dataDir: string; force: boolean; progress: Progress; now?: Date }): Promise<{ manifest: BackupManifest; movedAside: string | null }> {
  const from = path.resolve(opts.from);
  const dataDir = path.resolve(opts.dataDir);
  const manifest = await readBackup(from);
  let movedAside: string | null = null;
  const hasCluster = !!(await fs.stat(path.join(dataDir, 'postgres', 'PG_VERSION')).catch(() => null));
  if (hasCluster) {
    if (!opts.force) throw new RestoreRefused(`${dataDir} already holds a database; restore into an empty LUMEN_DATA_DIR, or pass --force to move the current one aside first`);
    movedAside = `${dataDir}.before-restore-${timestamp(opts.now ?? new Date())}`;
    opts.progress(`moving the current data directory aside to ${movedAside}`);
    await fs.rename(dataDir, movedAside);
  }
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const counts: Copied = { files: 0, bytes: 0 };
  opts.progress(`copying ${manifest.files} files (${(manifest.bytes / 1024 / 1024).toFixed(1)} MiB) into ${dataDir}`);
  await copyTree(from, dataDir, (name, depth) => depth === 0 && name === MANIFEST, counts);
  const clusterDir = path.join(dataDir, 'postgres');
  await fs.chmod(clusterDir, 0o700);
  // PostgreSQL runs only on a cluster owned by its own user (as root: the system user postgres).
  if (process.getuid?.() === 0) await chownTree(clusterDir, manifest.owner.uid, manifest.owner.gid);
  return { manifest, movedAside };
}

async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await fs.chown(dir, uid, gid);
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await chownTree(p, uid, gid);
    else await fs.chown(p, uid, gid);
  }
}
