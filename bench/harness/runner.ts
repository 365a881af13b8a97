import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BenchContext, Pending, Skipped, type RowDefinition } from './context.js';
import { findChromium } from './browser.js';
import { lumenCli, type LumenSetup } from './lumen.js';
import { describeMachine } from './machine.js';
import { sizesFor, type BenchOptions } from './options.js';
import { autovacuumDue, benchPool, createBenchDatabase, DEFAULT_SERVER, describeAutovacuum, serverAnswers, withDatabase } from './postgres.js';
import { renderMarkdown, resultsTable } from './report.js';
import type { BenchResults, RowResult } from './results.js';
import { findExecutable } from './tools.js';

export interface RunnerIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
}

/** A problem that ends the bench before any row runs (exit 1, message only). */
export class SetupError extends Error {}

export const RESULTS_FILE = 'bench/results.json';
export const FINDINGS_FILE = 'bench/FINDINGS.md';
export const MARKDOWN_FILE = 'BENCHMARKS.md';

/** Rewrites BENCHMARKS.md from bench/results.json, which must hold a full run of every row. */
export function renderFromResults(repo: string): string {
  const file = path.join(repo, RESULTS_FILE);
  if (!existsSync(file)) throw new SetupError(`${RESULTS_FILE} does not exist: run \`npm run bench\` first.`);
  const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
  if (results.executable !== 'dist/lumen') throw new SetupError(`${RESULTS_FILE} measured ${results.executable}, not dist/lumen; BENCHMARKS.md describes dist/lumen only.`);
  if (results.executableChanged) throw new SetupError(`${RESULTS_FILE} comes from a run during which the executable was rebuilt; run the bench again.`);
  if (results.mode !== 'full' || results.partial) {
    throw new SetupError(`${RESULTS_FILE} holds a ${results.mode === 'quick' ? 'quick' : 'partial'} run; BENCHMARKS.md is only written from a full run of every row (\`npm run bench\`).`);
  }
  const findingsFile = path.join(repo, FINDINGS_FILE);
  const findings = existsSync(findingsFile) ? readFileSync(findingsFile, 'utf8') : '';
  const md = renderMarkdown(results, findings);
  writeFileSync(path.join(repo, MARKDOWN_FILE), md);
  return md;
}

/** SHA-256 of the executable: a run whose executable was rebuilt midway measured two builds. */
function fingerprint(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

function requireExecutable(repo: string, chosen: string | null): string {
  const executable = chosen ? path.resolve(chosen) : path.join(repo, 'dist/lumen');
  try {
    accessSync(executable, constants.X_OK);
  } catch {
    if (chosen) throw new SetupError(`${executable} is not an executable file.`);
    throw new SetupError(`${executable} is missing. The bench measures the built executable and builds nothing itself: run \`npm run build\` first.`);
  }
  return executable;
}

/**
 * Runs the selected rows in order on a database of the bench's own, writes
 * bench/results.json and (full run of every row) BENCHMARKS.md. Returns the exit
 * code: 1 when a row failed, 0 otherwise (pending and skipped rows are not failures).
 */
export async function runBench(repo: string, opts: BenchOptions, rows: readonly RowDefinition[], io: RunnerIo): Promise<number> {
  const started = Date.now();
  const log = (message: string) => io.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);

  const executable = requireExecutable(repo, opts.executable);
  const executableSha = fingerprint(executable);
  const tools = { psql: findExecutable('psql', io.env), pgbench: findExecutable('pgbench', io.env), wrk: findExecutable('wrk', io.env), chromium: findChromium(io.env) };
  if (!tools.pgbench) log('pgbench not found: the intake anchor will be skipped. Install it with `apt-get install postgresql-contrib` (Debian) for the full suite.');
  if (!tools.wrk) log('wrk not found: the intake and page rows fall back to Node clients (autocannon), whose CPU is charged to the same cores as Lumen. Install it with `apt-get install wrk` (Debian).');
  if (!tools.psql) log('psql not found: the SQL anchors will be skipped. Install it with `apt-get install postgresql-client` (Debian).');
  if (!tools.chromium) log('Chromium not found: the console-load row will be skipped. Install it with `apt-get install chromium` (Debian), or point LUMEN_CHROMIUM at a Chromium executable.');

  const serverUrl = withDatabase(io.env.DATABASE_URL || DEFAULT_SERVER, 'postgres');
  const problem = await serverAnswers(serverUrl);
  if (problem) {
    const shown = new URL(serverUrl);
    shown.password = shown.password ? '***' : '';
    throw new SetupError(`No PostgreSQL server answers at ${shown.toString()} (${problem}). Set DATABASE_URL to a server where the bench may create a database.`);
  }

  const db = await createBenchDatabase(serverUrl);
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'lumen-bench-'));
  const pool = benchPool(db.url);
  const setup: LumenSetup = { executable, databaseUrl: db.url, secretKey: randomBytes(32).toString('hex'), dataDir: path.join(tmpDir, 'data') };
  const ctx = new BenchContext(opts, sizesFor(opts.quick), repo, setup, db, pool, tools, tmpDir, log);
  log(`database ${db.name}; scratch ${tmpDir}; ${opts.quick ? 'quick mode' : 'full sizes'}, ${opts.runs} run(s) per figure`);

  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    await ctx.stopLumen().catch(() => {});
    await pool.end().catch(() => {});
    if (opts.keepDb) log(`kept the database ${db.name} (drop it with: psql -c 'DROP DATABASE ${db.name}')`);
    else await db.drop().catch((err: unknown) => log(`could not drop ${db.name}: ${String(err)}`));
    rmSync(tmpDir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const results: RowResult[] = [];
  try {
    const machine = await describeMachine(pool, executable, tools, repo);
    const selected = rows.filter((r) => !opts.only || opts.only.includes(r.id as never));
    if (selected[0]?.id !== 'executable') {
      const r = await lumenCli(setup, ['migrate']);
      if (r.code !== 0) throw new SetupError(`lumen migrate failed: ${r.stderr.trim()}`);
    }
    for (const row of selected) {
      log(`— ${row.title}`);
      const t0 = Date.now();
      try {
        // What autovacuum would have done by now on a deployment's server: the dead rows
        // and stale statistics the rows before left are not this row's (bench/FINDINGS.md,
        // "The settle after an ANALYZE").
        log(describeAutovacuum(await autovacuumDue(pool)));
        // Each row starts with a fresh WAL budget: a checkpoint now, so that one the rows
        // before it made due (by max_wal_size) does not start inside this row's
        // measurement, with its writes and the full-page images of every page first
        // touched after it charged to this row (bench/FINDINGS.md, "Checkpoints").
        await pool.query('CHECKPOINT');
        const outcome = await row.run(ctx);
        results.push({ id: row.id, title: row.title, status: 'measured', ...outcome, seconds: (Date.now() - t0) / 1000 });
      } catch (err) {
        const status = err instanceof Pending ? 'pending' : err instanceof Skipped ? 'skipped' : 'failed';
        const reason = err instanceof Error ? err.message : String(err);
        log(`${status === 'failed' ? 'FAILED' : status}: ${reason}`);
        if (status === 'failed' && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
        results.push({ id: row.id, title: row.title, status, reason, lines: [], notes: [], params: {}, seconds: (Date.now() - t0) / 1000 });
        // A failed row may leave the shared server in any state: the next row gets a new one.
        if (status === 'failed') await ctx.stopLumen().catch(() => {});
      }
    }
    const rebuilt = fingerprint(executable) !== executableSha;
    if (rebuilt) log(`${executable} changed during the run: the figures mix two builds, so ${MARKDOWN_FILE} is not rewritten. Run again without rebuilding meanwhile.`);
    const out: BenchResults = {
      schema: 1,
      mode: opts.quick ? 'quick' : 'full',
      partial: selected.length !== rows.length,
      runs: opts.runs,
      executable: path.relative(repo, executable).startsWith('..') ? executable : path.relative(repo, executable),
      executableSha256: executableSha,
      executableChanged: rebuilt,
      startedAt: new Date(started).toISOString(),
      finishedAt: new Date().toISOString(),
      machine: { ...machine, loadAverageEnd: os.loadavg().map((l) => Math.round(l * 100) / 100) },
      rows: results,
    };
    writeFileSync(path.join(repo, RESULTS_FILE), JSON.stringify(out, null, 2) + '\n');
    io.stdout.write(resultsTable(results) + '\n');
    if (out.mode === 'full' && !out.partial && !opts.executable && !rebuilt) {
      renderFromResults(repo);
      log(`wrote ${RESULTS_FILE} and ${MARKDOWN_FILE}`);
    } else {
      log(`wrote ${RESULTS_FILE} (${MARKDOWN_FILE} is only rewritten by a full run of every row)`);
    }
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
  return results.some((r) => r.status === 'failed') ? 1 : 0;
}
