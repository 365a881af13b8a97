import os from 'node:os';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { Tools } from './context.js';
import type { MachineInfo } from './results.js';
import { run } from './tools.js';
import { wrkVersion } from './wrk.js';

const PG_SETTINGS = ['shared_buffers', 'max_connections', 'synchronous_commit', 'fsync', 'work_mem', 'effective_io_concurrency', 'max_wal_size', 'autovacuum'];

async function versionOf(command: string | null, args: string[]): Promise<string> {
  if (!command) return 'missing';
  const r = await run(command, args).catch(() => null);
  return r && r.code === 0 ? r.stdout.trim().split('\n')[0]! : 'unknown';
}

/** The machine a run measured: printed beside every figure in BENCHMARKS.md. */
export async function describeMachine(pool: pg.Pool, executable: string, tools: Tools, repo: string): Promise<Omit<MachineInfo, 'loadAverageEnd'>> {
  const { rows } = await pool.query<{ version: string }>('SELECT version()');
  const settings: Record<string, string> = {};
  for (const name of PG_SETTINGS) {
    const r = await pool.query<{ setting: string }>(`SELECT current_setting($1) AS setting`, [name]);
    settings[name] = r.rows[0]!.setting;
  }
  const autocannon = JSON.parse(readFileSync(path.join(repo, 'node_modules/autocannon/package.json'), 'utf8')) as { version: string };
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    postgres: rows[0]!.version.replace(/ on .*$/, ''),
    postgresSettings: settings,
    lumen: await versionOf(executable, ['--version']),
    benchNode: process.version,
    tools: {
      autocannon: autocannon.version,
      pgbench: await versionOf(tools.pgbench, ['--version']),
      wrk: await wrkVersion(tools.wrk),
      psql: await versionOf(tools.psql, ['--version']),
      chromium: await versionOf(tools.chromium, ['--version']),
    },
    loadAverageStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}
