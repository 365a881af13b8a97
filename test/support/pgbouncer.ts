import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

export interface PgBouncer {
  /** Where clients connect: same user and database as `serverUrl`, through the pooler. */
  url(database: string): string;
  /** Rows of an admin console command (SHOW POOLS, SHOW STATS...). */
  admin(command: string): Promise<Record<string, unknown>[]>;
  log(): string;
  stop(): Promise<void>;
  /** The binary's version, e.g. [1, 18, 0]. */
  readonly version: readonly number[];
  /**
   * Whether it tracks protocol-level named prepared statements in transaction pooling
   * (PgBouncer ≥ 1.21 with max_prepared_statements, set here when the binary has it).
   * Lumen must run with LUMEN_DB_PREPARED=off behind an older one.
   */
  readonly preparedStatements: boolean;
}

const binary = () => (existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer');

/** PgBouncer's version from `pgbouncer --version` ("PgBouncer 1.18.0"); [0] when it cannot be read. */
export function pgBouncerVersion(): number[] {
  try {
    const out = execFileSync(binary(), ['--version'], { encoding: 'utf8' });
    const m = /PgBouncer\s+(\d+)\.(\d+)(?:\.(\d+))?/i.exec(out);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : [0];
  } catch {
    return [0];
  }
}

/** 1.21 is the first PgBouncer to track named prepared statements in transaction pooling. */
export const tracksPreparedStatements = (v: readonly number[]) => (v[0] ?? 0) > 1 || ((v[0] ?? 0) === 1 && (v[1] ?? 0) >= 21);

/**
 * A real PgBouncer (the Debian package's binary) on a free loopback port in front of
 * the test server, with its own configuration in a temporary directory. Transaction
 * pooling; named prepared statements tracked (max_prepared_statements) when the
 * binary is 1.21 or newer, else not supported (so a client relying on them would fail).
 */
export async function startPgBouncer(serverUrl: string, opts: { poolSize: number }): Promise<PgBouncer> {
  const version = pgBouncerVersion();
  const preparedStatements = tracksPreparedStatements(version);
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-pgbouncer-'));
  // PgBouncer refuses to run as root; as root it is started as the postgres user, who must read and write here.
  chmodSync(dir, 0o777);
  const port = await freePort();
  const ini = path.join(dir, 'pgbouncer.ini');
  writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${opts.poolSize}`,
      'reserve_pool_size = 0',
      `max_db_connections = ${opts.poolSize}`,
      'max_client_conn = 500',
      'server_reset_query =',
      ...(preparedStatements ? ['max_prepared_statements = 200'] : []),
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const args = process.getuid?.() === 0 ? ['-u', 'postgres', ini] : [ini];
  // The Debian package installs it in /usr/sbin, which a non-root PATH may lack.
  const bin = binary();
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let failed: Error | null = null;
  child.once('error', (err: NodeJS.ErrnoException) => {
    failed = err.code === 'ENOENT' ? new Error('No pgbouncer on this machine: install the package (Debian: apt-get install -y pgbouncer; .ci/run does).') : err;
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));

  const url = (database: string) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  // Ready when the admin console answers.
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (failed) throw failed;
    if (gone) throw new Error(`pgbouncer exited: ${output}`);
    const c = new pg.Client({ connectionString: url('pgbouncer') });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.query('SHOW VERSION');
      await c.end();
      break;
    } catch {
      await c.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`pgbouncer did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    version,
    preparedStatements,
    async admin(command) {
      // The admin console speaks only the simple query protocol.
      const c = new pg.Client({ connectionString: url('pgbouncer') });
      await c.connect();
      try {
        return (await c.query(command)).rows as Record<string, unknown>[];
      } finally {
        await c.end();
      }
    },
    log() {
      try {
        return readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8');
      } catch {
        return output;
      }
    },
    async stop() {
      if (!gone) {
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
