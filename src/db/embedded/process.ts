/**
 * The embedded server's processes: start one (in its own session), find one already
 * running in the cluster, adopt an orphan, clear a stale postmaster.pid, wait for it to
 * be ready, and stop it. The cluster on disk is in cluster.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import type { PostgresRuntime } from '../../lib/assets.js';
import type { EmbeddedDatabase, EmbeddedDatabaseOptions } from './index.js';
import { attach, choosePort, exists, noexecHint, PASSWORD_FILE, readTextFile, serverUrl, writeState, type RunAs, type State } from './cluster.js';

/** Bounds on waiting; each wait polls the real condition. */
const READY_TIMEOUT_MS = 120_000;

const STOP_TIMEOUT_MS = 60_000;

const ORPHANS_TIMEOUT_MS = 15_000;

const POLL_MS = 50;

export async function self(): Promise<Pick<State, 'ownerPid' | 'ownerStartTime'>> {
  return { ownerPid: process.pid, ownerStartTime: (await startTime(process.pid)) ?? undefined };
}

interface Running {
  pid: number;
  port: number;
}

export class LockedByOther extends Error {}

export async function startServer(dataDir: string, clusterDir: string, runtime: PostgresRuntime, runAs: RunAs | null, password: string, log: EmbeddedDatabaseOptions['log']): Promise<EmbeddedDatabase> {
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

  const failure = await Promise.race([waitReady(port, password).then(() => null), exited.then((status) => status)]);
  if (failure !== null) {
    const tail = await logTail(logFile);
    if (/lock file "postmaster\.pid" already exists/.test(tail)) throw new LockedByOther('another process started the server');
    // The first line names the cause without a path (it reaches /livez); the log follows.
    throw new Error(`the embedded PostgreSQL exited during start-up (${String(failure)}): ${startupCause(tail, await diskFull(dataDir))}\n${logFile}:\n${tail}`);
  }
  const url = await attach(port, password, log);
  log('embedded PostgreSQL ready', { port, ms: Date.now() - started });
  return ownedDatabase(url, child.pid, child, clusterDir, log);
}

/** An owned server: stop() asks for a fast shutdown and waits until it is gone. */
export function ownedDatabase(url: string, pid: number, child: ChildProcess | null, clusterDir: string, log: EmbeddedDatabaseOptions['log']): EmbeddedDatabase {
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
    pid,
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
export async function findRunning(clusterDir: string): Promise<Running | null> {
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

export async function isInCluster(pid: number, clusterDir: string): Promise<boolean> {
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

export async function ownerAlive(state: State | null): Promise<boolean> {
  // No owner on record: someone else's server, never adopted.
  if (!state?.ownerPid) return true;
  return (await startTime(state.ownerPid)) === (state.ownerStartTime ?? null);
}

/** Polls a connection until the server accepts one (bounded). */
export async function waitReady(port: number, password: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ connectionString: serverUrl(port, 'postgres', password), connectionTimeoutMillis: 2000 });
    client.on('error', () => {}); // a failure reaches the awaited call; an idle connection's last words must not end the process
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      // The server answers but refuses the password: waiting will not help.
      if ((err as { code?: string }).code === '28P01') throw new Error(`the embedded PostgreSQL on port ${port} refused the password in ${PASSWORD_FILE} of the data directory`);
      if (Date.now() > deadline) throw new Error(`the embedded PostgreSQL on port ${port} did not become ready in ${READY_TIMEOUT_MS / 1000}s: ${String(err)}`);
    } finally {
      await client.end().catch(() => {});
    }
    await delay(POLL_MS);
  }
}

export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PG') && !key.startsWith('LC_') && key !== 'LANG') env[key] = value;
  env.LC_ALL = 'C';
  return env;
}

export function alive(pid: number): boolean {
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

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Free space under `dir` below 16 MiB: PostgreSQL cannot start (nor even write its log). */
async function diskFull(dir: string): Promise<boolean> {
  try {
    const s = await fs.statfs(dir);
    return s.bavail * s.bsize < 16 * 1024 * 1024;
  } catch {
    return false;
  }
}

/**
 * Why PostgreSQL did not start, in words, from the tail of its log (and whether the disk
 * is full: then the log itself may be empty). Absolute paths are left out: the text is
 * shown by /livez, to anyone.
 */
export function startupCause(tail: string, diskIsFull: boolean): string {
  const redact = (s: string) => s.replace(/"?\/[^\s"]+"?/g, '<path>').trim();
  if (diskIsFull || /No space left on device/i.test(tail)) return 'the disk of the data directory is full (No space left on device); free space and it starts again by itself';
  if (/Permission denied/i.test(tail)) return 'permission denied on the data directory (check its owner and mode)';
  const invalid = /invalid value for parameter "[^"]+": "[^"]*"/.exec(tail);
  if (invalid) return `PostgreSQL refuses a setting: ${invalid[0]}`;
  const fatal = /(?:FATAL|PANIC):\s+(.+)/.exec(tail);
  if (fatal) return redact(fatal[1]!);
  return 'no reason in its log (postgres.log in the data directory)';
}

async function logTail(file: string): Promise<string> {
  const text = (await readTextFile(file)) ?? '';
  return text.split('\n').slice(-20).join('\n').trim();
}
