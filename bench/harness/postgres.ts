import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { runOk } from './tools.js';
import { childCpuMs, withChildCpu } from './cpu.js';

/** The server the bench uses: DATABASE_URL's, else the local one at 127.0.0.1:5432. */
export const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function serverAnswers(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A database of the bench's own on the server, dropped at the end of the run. */
export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `lumen_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl, application_name: 'bench' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  let dropped = false;
  return {
    name,
    url: withDatabase(serverUrl, name),
    async drop() {
      if (dropped) return;
      dropped = true;
      const c = new pg.Client({ connectionString: serverUrl, application_name: 'bench' });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * The bench's own connections name themselves "bench", never "lumen*": Lumen's
 * visibility horizon only waits for Lumen's transactions, and a seeding transaction
 * must not look like one.
 */
export function benchPool(url: string, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, application_name: 'bench' });
  // An idle connection the server ends (the run's DROP DATABASE … WITH (FORCE) meets
  // one still closing after pool.end(), which resolves before its sockets have closed)
  // is reported here; the pool has already discarded it and the next query opens another.
  // Unheard, the report would end the process.
  pool.on('error', () => {});
  return pool;
}

/** Quotes a value as an SQL string literal (for psql scripts and pgbench -D values). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * Runs SQL through psql with \timing, repeating it `times`, and returns the time psql
 * reports for each execution (server execution plus transfer of every row to psql,
 * without printing: output goes to /dev/null).
 */
export async function psqlTimings(psql: string, url: string, sqlText: string, times: number): Promise<number[]> {
  const statement = sqlText.trim().replace(/;?$/, ';');
  const script = ['\\timing on', '\\o /dev/null', ...Array.from({ length: times }, () => statement), ''].join('\n');
  const r = await runOk(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', url], { input: script, env: { ...process.env, PGAPPNAME: 'bench-psql' } });
  const timings = [...r.stdout.matchAll(/^Time: ([0-9.]+) ms/gm)].map((m) => Number(m[1]));
  if (timings.length !== times) throw new Error(`psql reported ${timings.length} timings for ${times} executions:\n${r.stdout.slice(0, 500)}`);
  return timings;
}

/** Wall time of one psql invocation running `sqlText`, its output discarded (ms). */
export async function psqlWall(psql: string, url: string, sqlText: string): Promise<number> {
  const r = await runOk(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', sqlText, url], { discardStdout: true, env: { ...process.env, PGAPPNAME: 'bench-psql' } });
  return r.ms;
}

/** Connections the server can still accept from ordinary roles now. */
export async function freeConnections(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ free: number }>(
    `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
            - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS free`,
  );
  return rows[0]!.free;
}

/** What the server wrote while a run ran (cluster-wide: the bench is alone on it). */
export interface WalDuring {
  /** WAL written, bytes. */
  walBytes: number;
  /** Pages the checkpointer wrote: more than 0 when a checkpoint was in progress during the run. */
  checkpointPages: number;
}

const checkpointerColumns = new WeakMap<pg.Pool, Promise<string>>();

/** The expression of the checkpointer's written pages, asked of the server once per pool. */
function checkpointerPagesColumn(pool: pg.Pool): Promise<string> {
  let column = checkpointerColumns.get(pool);
  if (!column) {
    column = pool.query<{ server_version_num: string }>('SHOW server_version_num').then(({ rows }) =>
      // PostgreSQL 17 moved the checkpointer's counters out of pg_stat_bgwriter.
      Number(rows[0]!.server_version_num) >= 170000 ? '(SELECT buffers_written FROM pg_stat_checkpointer)' : '(SELECT buffers_checkpoint FROM pg_stat_bgwriter)',
    );
    checkpointerColumns.set(pool, column);
  }
  return column;
}

/**
 * Starts measuring the WAL written and the checkpointer's pages; the function it returns
 * ends the measurement. Tells which runs fell inside a checkpoint, when the first change
 * of every page writes the whole page into the WAL.
 */
export async function measureWal(pool: pg.Pool): Promise<() => Promise<WalDuring>> {
  const pages = await checkpointerPagesColumn(pool);
  const read = async () => (await pool.query<{ lsn: string; pages: string }>(`SELECT pg_current_wal_lsn()::text AS lsn, ${pages}::text AS pages`)).rows[0]!;
  const before = await read();
  return async () => {
    const after = await read();
    const { rows } = await pool.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS bytes', [after.lsn, before.lsn]);
    return { walBytes: Number(rows[0]!.bytes), checkpointPages: Number(after.pages) - Number(before.pages) };
  };
}

export interface PgbenchResult {
  tps: number;
  transactions: number;
  failed: number;
  latencyAvgMs: number;
  /** From the per-transaction log; null when no transaction was logged. */
  latencyP99Ms: number | null;
  command: string;
  /** CPU time of the pgbench process over the run, ms (null where it cannot be read). */
  clientCpuMs: number | null;
}

/**
 * pgbench with a custom script: -n (no vacuum of the built-in tables), extended query
 * protocol (what node-postgres uses), one thread per core at most, per-transaction log
 * for the latency percentiles.
 */
export async function runPgbench(
  pgbench: string,
  url: string,
  opts: { scriptFile: string; clients: number; threads: number; seconds: number; vars: Record<string, string>; logDir: string },
): Promise<PgbenchResult> {
  const prefix = path.join(opts.logDir, `pgbench_${opts.clients}_${Date.now()}`);
  const shown = ['-n', '-M', 'extended', '-c', String(opts.clients), '-j', String(Math.min(opts.threads, opts.clients)), '-T', String(opts.seconds), '-f', opts.scriptFile];
  const vars = Object.entries(opts.vars).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
  const wrapped = withChildCpu(pgbench, [...shown, '-l', `--log-prefix=${prefix}`, ...vars, url]);
  const r = await runOk(wrapped.command, wrapped.args, { env: { ...process.env, PGAPPNAME: 'bench-pgbench' } });
  const parsed = parsePgbenchOutput(r.stdout + r.stderr);
  // The per-transaction log, one file per thread: client_id transaction_no time ...
  // where time is the latency in µs ("failed" or "skipped" for those).
  const latencies: number[] = [];
  const dir = path.dirname(prefix);
  for (const f of readdirSync(dir).filter((n) => n.startsWith(path.basename(prefix)))) {
    for (const line of readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const latency = Number(line.split(' ')[2]);
      if (line !== '' && Number.isFinite(latency)) latencies.push(latency / 1000);
    }
  }
  latencies.sort((a, b) => a - b);
  const p99 = latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * 0.99) - 1)]! : null;
  const display = shown.map((a) => (a === opts.scriptFile ? path.relative(process.cwd(), a) : a));
  return { ...parsed, latencyP99Ms: p99, clientCpuMs: childCpuMs(r.stdout), command: `pgbench ${display.join(' ')} ${Object.keys(opts.vars).map((k) => `-D ${k}=…`).join(' ')} <database>` };
}

/** Reads tps, transaction counts and average latency from pgbench's summary. */
export function parsePgbenchOutput(out: string): Omit<PgbenchResult, 'latencyP99Ms' | 'command' | 'clientCpuMs'> {
  const tps = /tps = ([0-9.]+) \((?:without initial connection time|excluding connections establishing)\)/.exec(out);
  const processed = /number of transactions actually processed: (\d+)/.exec(out);
  const failed = /number of failed transactions: (\d+)/.exec(out);
  const latency = /latency average = ([0-9.]+) ms/.exec(out);
  if (!tps || !processed) throw new Error(`pgbench printed no result:\n${out.slice(-1500)}`);
  return { tps: Number(tps[1]), transactions: Number(processed[1]), failed: failed ? Number(failed[1]) : 0, latencyAvgMs: latency ? Number(latency[1]) : NaN };
}

/** What autovacuumDue did: the tables it vacuumed (and analyzed), and those it only analyzed. */
export interface AutovacuumWork {
  vacuumed: string[];
  analyzed: string[];
}

/**
 * Does now what autovacuum would have found due on a server that runs it: VACUUM (ANALYZE)
 * of every table of the database whose dead rows, or rows inserted since its last vacuum,
 * pass autovacuum's thresholds, and ANALYZE of every other table changed past the analyze
 * threshold (the table's autovacuum_* storage parameters, else the server's settings: 50
 * rows plus 20% of the table for dead rows, 1,000 plus 20% for inserts, 50 plus 10% for
 * changes, by default; a table with autovacuum_enabled off is left alone). The bench's
 * server may run without autovacuum, as test servers do; a deployment runs with it, and a
 * row must not measure what the rows before it left to a daemon that is not there.
 */
export async function autovacuumDue(pool: pg.Pool): Promise<AutovacuumWork> {
  // A table's own settings (ALTER TABLE … SET (autovacuum_…), as migration 0013 sets for
  // the pole tables) before the server's, as autovacuum reads them.
  const setting = (name: string) => `coalesce((t.opts->>'autovacuum_${name}')::float8, s.${name})`;
  const past = (count: string, kind: string) => `t.${count} > ${setting(`${kind}_threshold`)} + ${setting(`${kind}_scale_factor`)} * t.tuples`;
  const { rows } = await pool.query<{ name: string; vacuum: boolean; analyze: boolean }>(
    `WITH s AS (SELECT ${['vacuum', 'vacuum_insert', 'analyze'].flatMap((k) => [`${k}_threshold`, `${k}_scale_factor`]).map((n) => `max(setting::float8) FILTER (WHERE name = 'autovacuum_${n}') AS ${n}`).join(', ')}
                 FROM pg_settings WHERE name LIKE 'autovacuum%'),
          t AS (SELECT format('%I.%I', st.schemaname, st.relname) AS name, greatest(c.reltuples, 0) AS tuples,
                       st.n_dead_tup, st.n_ins_since_vacuum, st.n_mod_since_analyze,
                       (SELECT jsonb_object_agg(split_part(o, '=', 1), split_part(o, '=', 2)) FROM unnest(c.reloptions) o) AS opts
                  FROM pg_stat_user_tables st JOIN pg_class c ON c.oid = st.relid)
     SELECT t.name, (${past('n_dead_tup', 'vacuum')} OR ${past('n_ins_since_vacuum', 'vacuum_insert')}) AS vacuum, ${past('n_mod_since_analyze', 'analyze')} AS analyze
       FROM t CROSS JOIN s
      WHERE coalesce((t.opts->>'autovacuum_enabled')::boolean, true)
      ORDER BY t.name`,
  );
  const work: AutovacuumWork = { vacuumed: [], analyzed: [] };
  // A table dropped since the statistics were read (a job queue's, say) is left out.
  const gone = (err: unknown) => {
    if ((err as { code?: string }).code !== '42P01') throw err;
  };
  for (const r of rows) {
    if (r.vacuum) {
      await pool.query(`VACUUM (ANALYZE) ${r.name}`).then(() => work.vacuumed.push(r.name), gone);
    } else if (r.analyze) {
      await pool.query(`ANALYZE ${r.name}`).then(() => work.analyzed.push(r.name), gone);
    }
  }
  return work;
}

/** One log line for what autovacuumDue did. */
export function describeAutovacuum(work: AutovacuumWork): string {
  const names = (list: string[]) => (list.length === 0 ? 'none' : list.map((n) => n.replace(/^public\./, '')).join(', '));
  return `autovacuum's due work done: vacuumed and analyzed ${names(work.vacuumed)}; analyzed ${names(work.analyzed)}`;
}
