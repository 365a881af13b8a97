import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { findChromium } from '../../bench/harness/browser.js';
import { schedStat } from '../../bench/harness/cpu.js';
import { gcDelta, parseGc } from '../../bench/harness/gc.js';
import { Pending, Skipped, type RowDefinition } from '../../bench/harness/context.js';
import { parseOptions, ROW_IDS, sizesFor, UsageError } from '../../bench/harness/options.js';
import { autovacuumDue, describeAutovacuum, parsePgbenchOutput } from '../../bench/harness/postgres.js';
import { formatNumber, formatRatio, renderMarkdown, resultsTable } from '../../bench/harness/report.js';
import { check, ratioOf, series, type BenchResults, type RowResult } from '../../bench/harness/results.js';
import { runBench, SetupError } from '../../bench/harness/runner.js';
import { max, median, quantile } from '../../bench/harness/stats.js';
import { findExecutable } from '../../bench/harness/tools.js';
import { ROWS } from '../../bench/rows/index.js';
import { createTestDatabase } from '../support/database.js';

describe('bench statistics', () => {
  it('takes medians and interpolated quantiles', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 4])).toBe(2.5);
    expect(quantile([10, 20, 30, 40, 50], 0.99)).toBeCloseTo(49.6);
    expect(quantile([7], 0.99)).toBe(7);
    expect(max([3, 9, 2])).toBe(9);
    expect(() => median([])).toThrow(/no samples/);
  });

  it('keeps every run beside the median, and the ratio to the anchor', () => {
    const lumen = series('req/s', [900, 1000, 950], median);
    expect(lumen).toEqual({ unit: 'req/s', median: 950, runs: [900, 1000, 950] });
    expect(ratioOf(lumen, series('tx/s', [1900], median))).toBe(0.5);
    expect(ratioOf(lumen, null)).toBeNull();
  });
});

describe('bench options', () => {
  it('defaults to full sizes, three runs and every row', () => {
    const o = parseOptions([]);
    expect(o).toMatchObject({ quick: false, runs: 3, only: null, keepDb: false, renderOnly: false, executable: null });
    expect(sizesFor(false).poles).toBe(1_000_000);
    expect(sizesFor(false).fanoutEvents).toBe(10_000);
    expect(sizesFor(false).pollingEvents).toBe(100_000);
    expect(sizesFor(false).importRows).toBe(1_000_000);
  });

  it('quick mode runs once with small sizes unless told otherwise', () => {
    expect(parseOptions(['--quick']).runs).toBe(1);
    expect(parseOptions(['--quick', '--runs', '2']).runs).toBe(2);
    expect(sizesFor(true).poles).toBeLessThan(100_000);
  });

  it('reads --only, --runs=N and --executable, and refuses what it does not know', () => {
    const o = parseOptions(['--only', 'intake,pole-page', '--runs=5', '--executable', '/opt/lumen']);
    expect(o.only).toEqual(['intake', 'pole-page']);
    expect(o.runs).toBe(5);
    expect(o.executable).toBe('/opt/lumen');
    expect(parseOptions(['--only', 'console-inbox,console-load']).only).toEqual(['console-inbox', 'console-load']);
    expect(() => parseOptions(['--only', 'nope'])).toThrow(UsageError);
    expect(() => parseOptions(['--runs', '0'])).toThrow(/--runs/);
    expect(() => parseOptions(['--runs'])).toThrow(/needs a value/);
    expect(() => parseOptions(['--fast'])).toThrow(/unknown option/);
  });

  it('names every row once, in the order the rows run', () => {
    expect(ROWS.map((r) => r.id)).toEqual([...ROW_IDS]);
  });
});

describe('pgbench output', () => {
  it('reads throughput, transactions, failures and latency', () => {
    const out = `transaction type: bench/sql/intake-anchor.pgbench.sql
scaling factor: 1
query mode: extended
number of clients: 16
number of threads: 2
maximum number of tries: 1
duration: 10 s
number of transactions actually processed: 18234
number of failed transactions: 0 (0.000%)
latency average = 8.770 ms
initial connection time = 21.507 ms
tps = 1824.363107 (without initial connection time)
`;
    expect(parsePgbenchOutput(out)).toEqual({ tps: 1824.363107, transactions: 18234, failed: 0, latencyAvgMs: 8.77 });
    expect(() => parsePgbenchOutput('pgbench: error: connection refused')).toThrow(/no result/);
  });
});

function row(partial: Partial<RowResult> & Pick<RowResult, 'id' | 'title' | 'status'>): RowResult {
  return { lines: [], notes: [], params: {}, seconds: 1, ...partial };
}

const measured = row({
  id: 'intake',
  title: 'Intake',
  status: 'measured',
  lines: [
    {
      label: '16 connections',
      lumen: series('req/s', [940, 960, 950], median),
      detail: 'p99 31 ms',
      anchor: { label: 'pgbench', series: series('tx/s', [1800], median) },
      ratio: 950 / 1800,
      checks: [check('≥ 50% of the anchor', true), check('p99 ≤ 50 ms', false)],
    },
  ],
  notes: ['A note.'],
  params: { connections: 16 },
});

describe('the report', () => {
  it('formats figures and ratios', () => {
    expect(formatNumber(1234.5)).toBe('1,235');
    expect(formatNumber(12.34)).toBe('12.3');
    expect(formatNumber(1.234)).toBe('1.23');
    expect(formatRatio(0.5278)).toBe('0.53×');
    expect(formatRatio(null)).toBe('—');
  });

  it('shows each figure beside its anchor and ratio, and says which targets were missed', () => {
    const table = resultsTable([measured, row({ id: 'events-polling', title: 'Events polling', status: 'pending', reason: 'events polling not built yet' })]);
    expect(table).toContain('| Intake | 16 connections | 950 req/s (p99 31 ms) | 1,800 tx/s (pgbench) | 0.53× | ≥ 50% of the anchor: met; p99 ≤ 50 ms: **missed** |');
    expect(table).toContain('| Events polling | — | pending: events polling not built yet | — | — | — |');
    expect(resultsTable([row({ id: 'console-load', title: 'Console load', status: 'skipped', reason: 'Chromium not found' })])).toContain('| Console load | — | skipped: Chromium not found | — | — | — |');
  });

  it('writes BENCHMARKS.md with the machine, the runs of every figure and the findings', () => {
    const results: BenchResults = {
      schema: 1,
      mode: 'full',
      partial: false,
      runs: 3,
      executable: 'dist/lumen',
      executableSha256: '0'.repeat(64),
      executableChanged: false,
      startedAt: '2026-03-14T12:00:00.000Z',
      finishedAt: '2026-03-14T12:30:00.000Z',
      machine: {
        cpus: 2,
        cpuModel: 'AMD EPYC',
        memoryBytes: 24 * 1024 ** 3,
        os: 'Linux 6.1 x64',
        postgres: 'PostgreSQL 15.20',
        postgresSettings: { shared_buffers: '16384' },
        lumen: 'lumen 0.1.0 (node v24.21.0)',
        benchNode: 'v24.21.0',
        tools: { autocannon: '9.0.0', pgbench: 'pgbench (PostgreSQL) 15.20', psql: 'psql (PostgreSQL) 15.20' },
        loadAverageStart: [0.1, 0.2, 0.3],
        loadAverageEnd: [1, 1, 1],
      },
      rows: [measured],
    };
    const md = renderMarkdown(results, '### Intake\nThe counter row serialises writers.');
    expect(md).toContain('| CPU | 2 cores, AMD EPYC |');
    expect(md).toContain('| Memory | 24.0 GiB |');
    expect(md).toContain('PostgreSQL 15.20 (shared_buffers=16384)');
    expect(md).toContain('- 16 connections: runs 940, 960, 950 req/s; anchor runs 1,800 tx/s');
    expect(md).toContain('Targets missed in this run: Intake.');
    expect(md).toContain('The counter row serialises writers.');
    expect(md).toContain('npm run bench -- --quick');
  });
});

describe('the runner', () => {
  it('refuses to run without the built executable, and says how to build it', async () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'lumen-bench-test-'));
    try {
      const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };
      await expect(runBench(repo, parseOptions(['--quick']), ROWS, io)).rejects.toThrow(SetupError);
      await expect(runBench(repo, parseOptions(['--quick']), ROWS, io)).rejects.toThrow(/dist\/lumen is missing.*npm run build/);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('reports a row that cannot run here as skipped and a pending one as pending, neither failing the run; a thrown error fails it', async () => {
    // A repository with a stand-in executable: the runner migrates with it and reads its version.
    const repo = mkdtempSync(path.join(os.tmpdir(), 'lumen-bench-test-'));
    mkdirSync(path.join(repo, 'dist'));
    mkdirSync(path.join(repo, 'bench'));
    symlinkSync(path.resolve('node_modules'), path.join(repo, 'node_modules'));
    writeFileSync(path.join(repo, 'dist/lumen'), '#!/bin/sh\necho "lumen 0.0.0-test"\n');
    chmodSync(path.join(repo, 'dist/lumen'), 0o755);
    const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
    const io = { stdout: quiet, stderr: quiet, env: process.env };
    const skipped: RowDefinition = { id: 'console-load', title: 'Needs a browser', run: () => Promise.reject(new Skipped('Chromium not found')) };
    const pending: RowDefinition = { id: 'events-polling', title: 'Not built', run: () => Promise.reject(new Pending('not built yet')) };
    const failing: RowDefinition = { id: 'intake', title: 'Broken', run: () => Promise.reject(new Error('boom')) };
    const statuses = () => (JSON.parse(readFileSync(path.join(repo, 'bench/results.json'), 'utf8')) as BenchResults).rows.map((r) => [r.id, r.status, r.reason]);
    try {
      expect(await runBench(repo, parseOptions(['--quick']), [skipped, pending], io)).toBe(0);
      expect(statuses()).toEqual([
        ['console-load', 'skipped', 'Chromium not found'],
        ['events-polling', 'pending', 'not built yet'],
      ]);
      expect(await runBench(repo, parseOptions(['--quick']), [skipped, failing], io)).toBe(1);
      expect(statuses()).toEqual([
        ['console-load', 'skipped', 'Chromium not found'],
        ['intake', 'failed', 'boom'],
      ]);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe('tools', () => {
  it('finds executables on PATH and reports a missing one as null', () => {
    expect(findExecutable('sh', { PATH: '/usr/bin:/bin' })).toMatch(/\/sh$/);
    expect(findExecutable('pgbench', { PATH: path.join(os.tmpdir(), 'no-such-dir') })).toBeNull();
  });

  it('finds Chromium through LUMEN_CHROMIUM, and reports a path there that cannot run as none', () => {
    const sh = findExecutable('sh', { PATH: '/usr/bin:/bin' })!;
    expect(findChromium({ LUMEN_CHROMIUM: sh, PATH: '' })).toBe(sh);
    expect(findChromium({ LUMEN_CHROMIUM: path.join(os.tmpdir(), 'no-such-chromium'), PATH: '/usr/bin:/bin' })).toBeNull();
  });
});

describe('GC pauses and waits for a core', () => {
  it("sums prom-client's GC histogram over its kinds: pauses, time, those of 10 ms or more, full collections", () => {
    const exposition = [
      '# HELP lumen_nodejs_gc_duration_seconds Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
      '# TYPE lumen_nodejs_gc_duration_seconds histogram',
      'lumen_nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 5',
      'lumen_nodejs_gc_duration_seconds_bucket{le="0.01",kind="minor"} 9',
      'lumen_nodejs_gc_duration_seconds_bucket{le="0.1",kind="minor"} 10',
      'lumen_nodejs_gc_duration_seconds_bucket{le="+Inf",kind="minor"} 10',
      'lumen_nodejs_gc_duration_seconds_sum{kind="minor"} 0.05',
      'lumen_nodejs_gc_duration_seconds_count{kind="minor"} 10',
      'lumen_nodejs_gc_duration_seconds_bucket{le="0.001",kind="major"} 0',
      'lumen_nodejs_gc_duration_seconds_bucket{le="0.01",kind="major"} 1',
      'lumen_nodejs_gc_duration_seconds_bucket{le="+Inf",kind="major"} 3',
      'lumen_nodejs_gc_duration_seconds_sum{kind="major"} 0.06',
      'lumen_nodejs_gc_duration_seconds_count{kind="major"} 3',
      'lumen_process_cpu_seconds_total 12.5',
    ].join('\n');
    const totals = parseGc(exposition)!;
    expect(totals.pauses).toBe(13);
    expect(totals.ms).toBeCloseTo(110, 6);
    expect(totals.long).toBe(3);
    expect(totals.majorPauses).toBe(3);
    expect(totals.majorMs).toBeCloseTo(60, 6);
    expect(gcDelta(totals, { pauses: 10, ms: 100, long: 1, majorPauses: 1, majorMs: 50 })).toMatchObject({ pauses: 3, long: 2, majorPauses: 2 });
    expect(parseGc('lumen_process_cpu_seconds_total 12.5\n')).toBeNull();
  });

  it("reads the pauses from prom-client's own exposition, as Lumen's /metrics serves it", async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'lumen_' });
    // Declared at once: read as totals (zero unless V8 has collected already), not as missing.
    let totals = parseGc(await registry.metrics());
    expect(totals).not.toBeNull();
    // Allocate until V8 has collected at least once and the observer has reported it.
    const kept: number[][] = [];
    for (let round = 0; round < 2000 && totals!.pauses === 0; round++) {
      for (let i = 0; i < 2000; i++) kept.push(new Array(16).fill(i));
      kept.length = 0;
      await new Promise((resolve) => setImmediate(resolve));
      totals = parseGc(await registry.metrics());
    }
    expect(totals!.pauses).toBeGreaterThan(0);
    expect(totals!.ms).toBeGreaterThan(0);
    expect(totals!.long).toBeLessThanOrEqual(totals!.pauses);
  });

  it.runIf(process.platform === 'linux')("reads a thread's time on a core and in a run queue, and nothing for a process that is gone", () => {
    const before = schedStat('self')!;
    expect(before.runMs).toBeGreaterThan(0);
    expect(before.waitMs).toBeGreaterThanOrEqual(0);
    let now = schedStat('self')!;
    const started = Date.now();
    while (now.runMs - before.runMs < 20 && Date.now() - started < 10_000) now = schedStat(process.pid)!;
    expect(now.runMs - before.runMs).toBeGreaterThanOrEqual(20);
    expect(now.waitMs).toBeGreaterThanOrEqual(before.waitMs);
    expect(schedStat(2 ** 22 + 1)).toBeNull();
  });
});

describe("autovacuum's due work", () => {
  it('vacuums the tables past the dead-row threshold (their own, where a table sets one), analyzes those past the change threshold, and leaves the others', async () => {
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    // The forced drop at the end may terminate a backend whose client the ended pool is
    // still closing: the pool reports that as an error event, which nothing else handles.
    pool.on('error', () => {});
    try {
      for (const t of ['bench_dead', 'bench_changed', 'bench_quiet', 'bench_own', 'bench_off']) {
        await client.query(`CREATE TABLE ${t} (id int PRIMARY KEY, v int)`);
        await client.query(`INSERT INTO ${t} SELECT g, 0 FROM generate_series(1, 10000) g`);
        // The insert's counters reach the statistics before the vacuum resets them.
        await client.query('SELECT pg_stat_force_next_flush()');
        await client.query(`VACUUM (ANALYZE) ${t}`);
      }
      // 10,000 rows: due for a vacuum past 50 + 20% dead rows, for an analyze past 50 + 10% changed.
      await client.query('DELETE FROM bench_dead WHERE id <= 3000');
      await client.query('UPDATE bench_changed SET v = 1 WHERE id <= 1500');
      await client.query('UPDATE bench_quiet SET v = 1 WHERE id <= 100');
      // A table's own threshold (as migration 0013 sets for the pole tables): 50 + 0.5%, so
      // 200 dead rows are due there, and none of a table with autovacuum off.
      await client.query('ALTER TABLE bench_own SET (autovacuum_vacuum_scale_factor = 0.005)');
      await client.query('DELETE FROM bench_own WHERE id <= 200');
      await client.query('ALTER TABLE bench_off SET (autovacuum_enabled = false)');
      await client.query('DELETE FROM bench_off WHERE id <= 3000');
      // This session's counters reach the server's statistics when it is next idle.
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');

      const work = await autovacuumDue(pool);
      expect(work.vacuumed).toContain('public.bench_dead');
      expect(work.vacuumed).toContain('public.bench_own');
      expect(work.vacuumed).not.toContain('public.bench_changed');
      expect([...work.vacuumed, ...work.analyzed]).not.toContain('public.bench_off');
      expect(work.analyzed).toContain('public.bench_changed');
      expect([...work.vacuumed, ...work.analyzed]).not.toContain('public.bench_quiet');
      const { rows } = await client.query<{ relname: string; n_dead_tup: string; n_mod_since_analyze: string }>(
        `SELECT relname, n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname LIKE 'bench_%' ORDER BY relname`,
      );
      expect(rows.map((r) => [r.relname, Number(r.n_dead_tup), Number(r.n_mod_since_analyze)])).toEqual([
        ['bench_changed', 1500, 0],
        ['bench_dead', 0, 0],
        ['bench_off', 3000, 3000],
        ['bench_own', 0, 0],
        ['bench_quiet', 100, 100],
      ]);
      expect(describeAutovacuum(work)).toMatch(/vacuumed and analyzed .*bench_dead.*; analyzed .*bench_changed/);
      // Done once: nothing of these tables is due any more.
      const again = await autovacuumDue(pool);
      expect([...again.vacuumed, ...again.analyzed].filter((n) => n.includes('bench_'))).toEqual([]);
    } finally {
      await pool.end();
      await client.end();
      await db.drop();
    }
  });
});
