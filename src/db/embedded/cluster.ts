/**
 * The embedded cluster on disk: initdb, the version check, the state file with the
 * server's port, the system user the server runs as (as root) and the directories it
 * must reach, and the database `lumen` on a server that answers. Process control is in
 * process.ts; index.ts opens the database.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import type { PostgresRuntime } from '../../lib/assets.js';
import type { EmbeddedDatabaseOptions } from './index.js';
import { childEnv, waitReady } from './process.js';

const DATABASE = 'lumen';

const SUPERUSER = 'postgres';

const STATE_FILE = 'embedded-postgres.json';

export interface State {
  /** The port of the server (kept so the URL is stable). */
  port: number;
  /** The process that started (or adopted) the server, and its start time: when it is gone, the server is an orphan. */
  ownerPid?: number;
  ownerStartTime?: string;
}

export interface RunAs {
  uid: number;
  gid: number;
}

export async function initCluster(clusterDir: string, runtime: PostgresRuntime, runAs: RunAs | null, password: string, log: EmbeddedDatabaseOptions['log']): Promise<void> {
  const started = Date.now();
  log('initialising the embedded PostgreSQL cluster (first start, takes a few seconds)', { dir: clusterDir, postgres: runtime.postgresVersion });
  // initdb into a fresh directory beside the target, renamed when complete: a
  // crash mid-way leaves no half-made cluster, and two first starts cannot collide.
  const tmp = `${clusterDir}.init-${process.pid}-${randomBytes(4).toString('hex')}`;
  await fs.mkdir(tmp, { mode: 0o700 });
  try {
    if (runAs) await fs.chown(tmp, runAs.uid, runAs.gid);
    // initdb reads the superuser's password from a file; the server's user must read it.
    const pwfile = `${tmp}.pw`;
    await fs.writeFile(pwfile, password + '\n', { mode: 0o600 });
    if (runAs) await fs.chown(pwfile, runAs.uid, runAs.gid);
    const args = [
      '-D', tmp,
      '-U', SUPERUSER,
      '--encoding=UTF8',
      // C collation from the OS (always present), Unicode-aware case mapping from
      // PostgreSQL's built-in provider: no dependency on the machine's locales.
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
      '--auth=scram-sha-256',
      `--pwfile=${pwfile}`,
      '--no-instructions',
    ];
    const result = spawnSync(path.join(runtime.binDir, 'initdb'), args, { env: childEnv(), encoding: 'utf8', ...(runAs ?? {}) });
    await fs.rm(pwfile, { force: true });
    if (result.error) throw new Error(`cannot run ${path.join(runtime.binDir, 'initdb')}: ${result.error.message}${noexecHint(result.error)}`);
    if (result.status !== 0) throw new Error(`initdb failed (exit ${String(result.status ?? result.signal)}): ${(result.stderr || result.stdout).trim()}`);
    // Only loopback TCP, no Unix socket (the server is started without one).
    await fs.writeFile(path.join(tmp, 'pg_hba.conf'), HBA('scram-sha-256'));
    try {
      await fs.rename(tmp, clusterDir);
    } catch (err) {
      if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) throw err;
      log('another process initialised the cluster first');
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
    await fs.rm(`${tmp}.pw`, { force: true });
  }
  log('initialised the embedded PostgreSQL cluster', { ms: Date.now() - started });
}

export async function checkClusterVersion(clusterDir: string, runtime: PostgresRuntime): Promise<void> {
  const clusterMajor = (await fs.readFile(path.join(clusterDir, 'PG_VERSION'), 'utf8')).trim();
  const runtimeMajor = runtime.postgresVersion.split('.')[0];
  if (clusterMajor !== runtimeMajor) {
    throw new Error(`${clusterDir} holds a PostgreSQL ${clusterMajor} cluster but this Lumen carries PostgreSQL ${runtime.postgresVersion}; dump it with the old version or remove the directory`);
  }
}

/** Waits until the server answers, creates the database if missing, returns its URL. */
export async function attach(port: number, password: string, log: EmbeddedDatabaseOptions['log']): Promise<string> {
  await waitReady(port, password);
  const client = new pg.Client({ connectionString: serverUrl(port, 'postgres', password) });
  client.on('error', () => {}); // a failure reaches the awaited call; an idle connection's last words must not end the process
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (!rowCount) {
      try {
        await client.query(`CREATE DATABASE ${DATABASE}`);
        log('created the database', { database: DATABASE });
      } catch (err) {
        // 42P04 duplicate_database, 23505: another process created it meanwhile.
        if (!['42P04', '23505'].includes((err as { code?: string }).code ?? '')) throw err;
      }
    }
  } finally {
    await client.end().catch(() => {});
  }
  return serverUrl(port, DATABASE, password);
}

export function serverUrl(port: number, database: string, password: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/** The superuser's password, kept in the data directory readable by its owner only (0600). */
export const PASSWORD_FILE = 'postgres-password';

/**
 * The password of the embedded server's superuser: made at the first start (32 random
 * bytes, base64url) and kept in `<dataDir>/postgres-password`, mode 0600, so that only
 * the user running Lumen (serve and the CLI alike) can reach the database. Any mode
 * looser than 0600 is tightened.
 */
export async function ensurePassword(dataDir: string): Promise<string> {
  const file = path.join(dataDir, PASSWORD_FILE);
  const existing = await readTextFile(file);
  if (existing !== null && existing.trim() !== '') {
    if (((await fs.stat(file)).mode & 0o077) !== 0) await fs.chmod(file, 0o600);
    return existing.trim();
  }
  const password = randomBytes(32).toString('base64url');
  try {
    await fs.writeFile(file, password + '\n', { mode: 0o600, flag: 'wx' });
    return password;
  } catch (err) {
    // Another first start wrote it meanwhile.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return ((await readTextFile(file)) ?? '').trim();
  }
}

const HBA = (method: string) =>
  '# Lumen embedded database: listens on 127.0.0.1 only; the superuser password is in\n' +
  `# ${'<LUMEN_DATA_DIR>'}/${PASSWORD_FILE} (mode 0600).\n` +
  '# TYPE  DATABASE  USER  ADDRESS       METHOD\n' +
  `host    all       all   127.0.0.1/32  ${method}\n`;

/**
 * A cluster made by an earlier release trusted every local connection (any local user
 * was superuser). This gives the superuser the password, requires it (scram-sha-256)
 * and reloads the server; idempotent, so an interrupted upgrade finishes next time.
 */
export async function requirePassword(clusterDir: string, url: string, password: string, log: EmbeddedDatabaseOptions['log']): Promise<void> {
  const hbaFile = path.join(clusterDir, 'pg_hba.conf');
  const hba = (await readTextFile(hbaFile)) ?? '';
  if (!/^\s*host\s.*\btrust\s*$/m.test(hba)) return;
  log('requiring a password on the embedded PostgreSQL (a cluster of an earlier release trusted every local user)');
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {}); // as in attach
  await client.connect();
  try {
    await client.query(`SET password_encryption = 'scram-sha-256'`);
    await client.query(`ALTER ROLE ${SUPERUSER} PASSWORD ${client.escapeLiteral(password)}`);
    const tmp = `${hbaFile}.lumen-${process.pid}`;
    await fs.writeFile(tmp, HBA('scram-sha-256'), { mode: 0o600 });
    const owner = await fs.stat(hbaFile);
    await fs.chown(tmp, owner.uid, owner.gid).catch(() => {});
    await fs.rename(tmp, hbaFile);
    await client.query('SELECT pg_reload_conf()');
  } finally {
    await client.end().catch(() => {});
  }
}

/** The kept port if it is still free, else a new free one (the URL changes then, and says so). */
export async function choosePort(dataDir: string, log: EmbeddedDatabaseOptions['log']): Promise<number> {
  const state = await readState(dataDir);
  if (state?.port && (await portFree(state.port))) return state.port;
  const port = await freePort();
  if (state?.port) log('the embedded PostgreSQL port is taken by another program; moving', { from: state.port, to: port });
  return port;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function readState(dataDir: string): Promise<State | null> {
  const text = await readTextFile(path.join(dataDir, STATE_FILE));
  if (!text) return null;
  try {
    const state = JSON.parse(text) as Partial<State>;
    if (typeof state.port !== 'number') return null;
    return {
      port: state.port,
      ownerPid: typeof state.ownerPid === 'number' ? state.ownerPid : undefined,
      ownerStartTime: typeof state.ownerStartTime === 'string' ? state.ownerStartTime : undefined,
    };
  } catch {
    return null;
  }
}

export async function writeState(dataDir: string, state: State): Promise<void> {
  const file = path.join(dataDir, STATE_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(state, null, 2) + '\n');
  await fs.rename(tmp, file);
}

/** The uid/gid of the system user `postgres`, created when missing (root only). */
export function ensurePostgresUser(log: EmbeddedDatabaseOptions['log']): RunAs {
  const lookup = (): RunAs | null => {
    const uid = spawnSync('id', ['-u', SUPERUSER], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', SUPERUSER], { encoding: 'utf8' });
    if (uid.status !== 0 || gid.status !== 0) return null;
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  const found = lookup();
  if (found) return found;
  log('PostgreSQL refuses to run as root: creating the system user "postgres" to run the embedded database');
  const made = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', SUPERUSER], { encoding: 'utf8' });
  const created = lookup();
  if (!created) throw new Error(`running as root, and cannot create the system user "postgres" for the embedded PostgreSQL (useradd: ${(made.stderr || String(made.error ?? '')).trim()}); create it, run Lumen as another user, or set DATABASE_URL`);
  return created;
}

/**
 * The `postgres` user must be able to enter every directory down to the runtime
 * and the data dir. Where it cannot (e.g. a 0700 temp dir or home), add the
 * search bit for others: enough to pass through, not to list.
 */
export async function makeReachable(dirs: readonly string[], runAs: RunAs, log: EmbeddedDatabaseOptions['log']): Promise<void> {
  const checked = new Set<string>();
  const changed: string[] = [];
  for (const start of dirs) {
    for (let dir = await fs.realpath(start); !checked.has(dir); dir = path.dirname(dir)) {
      checked.add(dir);
      const st = await fs.stat(dir);
      const bit = st.uid === runAs.uid ? 0o100 : st.gid === runAs.gid ? 0o010 : 0o001;
      if ((st.mode & bit) === 0) {
        await fs.chmod(dir, (st.mode & 0o7777) | 0o001);
        changed.push(dir);
      }
      if (dir === path.dirname(dir)) break;
    }
  }
  if (changed.length > 0) log('made directories passable (o+x) for the "postgres" user that runs the embedded database', { dirs: changed });
}

export function noexecHint(err: unknown): string {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'EACCES' ? ' (is LUMEN_DATA_DIR on a filesystem mounted noexec?)' : '';
}

export async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

export async function readTextFile(file: string): Promise<string | null> {
  return fs.readFile(file, 'utf8').catch(() => null);
}
