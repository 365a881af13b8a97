import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type pg from 'pg';
import { forkDriver, runDriverMeasured } from '../harness/drivers.js';
import { CpuSampler, describeCpu, describeWait, medianCpu, perRequest, type CpuPerRequest } from '../harness/cpu.js';
import { gcDelta, lumenGc, type GcTotals } from '../harness/gc.js';
import { runWrk, type LoadResult } from '../harness/wrk.js';
import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { intakeBody } from '../harness/payloads.js';
import { freeConnections, measureWal, runPgbench, type PgbenchResult, type WalDuring } from '../harness/postgres.js';
import { check, ratioOf, series, type Line } from '../harness/results.js';
import { median } from '../harness/stats.js';
import { Pending, type RowDefinition } from '../harness/context.js';
import type { IntakeLoadResult } from '../drivers/intake-load.js';
import { DEFAULT_DB_POOL_SIZE } from '../../src/config.js';
import type { FloorMessage, FloorRequest } from '../drivers/intake-floor.js';

const ANCHOR_SCRIPT = 'bench/sql/intake-anchor.pgbench.sql';
/** Lumen's default LUMEN_DB_POOL_SIZE, which the bench leaves as it is: the floor's pool is as large. */
const POOL_SIZE = DEFAULT_DB_POOL_SIZE;

/** Starts bench/drivers/intake-floor.ts on the bench database; resolves with its port and pid. */
async function startFloor(repo: string, input: { databaseUrl: string; tenant: string; partner: string; year: number }): Promise<{ child: ChildProcess; port: number; pid: number }> {
  const child = forkDriver(repo, 'intake-floor.ts', [JSON.stringify({ ...input, poolSize: POOL_SIZE })]);
  const listening = await new Promise<Extract<FloorMessage, { type: 'listening' }>>((resolve, reject) => {
    child.once('message', (m: FloorMessage) => (m.type === 'listening' ? resolve(m) : reject(new Error(`the intake floor said ${m.type}`))));
    child.once('exit', (code) => reject(new Error(`the intake floor exited with ${code}`)));
  });
  return { child, port: listening.port, pid: listening.pid };
}

/** The floor's GC totals since it started. */
function floorGc(child: ChildProcess): Promise<GcTotals> {
  return new Promise((resolve) => {
    const onMessage = (m: FloorMessage) => {
      if (m.type !== 'gc') return;
      child.off('message', onMessage);
      resolve({ pauses: m.pauses, ms: m.ms, long: m.long, majorPauses: m.majorPauses, majorMs: m.majorMs });
    };
    child.on('message', onMessage);
    child.send({ type: 'gc' } satisfies FloorRequest);
  });
}

type Measured = { cpu: CpuPerRequest; wal: WalDuring; gc: GcTotals | null };

/**
 * Each run's GC pauses and its server thread's wait for a core, beside the p99s: what a
 * Node server's tail is made of on cores it shares with PostgreSQL and the client.
 */
function perRunSchedule(runs: readonly Measured[], serverName: string): string {
  const parts: string[] = [];
  const gcs = runs.map((r) => r.gc);
  if (gcs.length > 0 && gcs.every((g): g is GcTotals => g !== null)) {
    parts.push(
      `GC ${gcs.map((g) => Math.round(g.ms)).join(', ')} ms per run in ${gcs.map((g) => g.pauses).join(', ')} pauses (${gcs.map((g) => g.long).join(', ')} of 10 ms or more; ` +
        `full collections ${gcs.map((g) => `${g.majorPauses} for ${Math.round(g.majorMs)} ms`).join(', ')})`,
    );
  }
  const waits = runs.map((r) => r.cpu.serverWaitMs);
  if (waits.length > 0 && waits.every((w): w is number => w !== null)) {
    parts.push(`${serverName}'s thread waited for a core ${waits.map((w) => Math.round(w * 1000)).join(', ')} µs per request`);
  }
  const pgWait = describeWait({ ...medianCpu(runs.map((r) => r.cpu)), serverWaitMs: null });
  if (pgWait) parts.push(pgWait);
  return parts.length ? `; ${parts.join('; ')}` : '';
}

/** The floor runs at the connection count the p99 target is set at. */
const FLOOR_CONNECTIONS = 16;

/**
 * Removes what the floor wrote (its partner's alerts, their orders, both histories and
 * the stored answers) and vacuums those tables, so that the rows after this one read
 * the tables as they would have been without the floor.
 */
async function removeFloorRows(pool: pg.Pool, partnerId: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('CREATE TEMP TABLE floor_alert ON COMMIT DROP AS SELECT id, service_order_id FROM alert WHERE external_system_id = $1', [partnerId]);
    await client.query('DELETE FROM idempotency_key WHERE external_system_id = $1', [partnerId]);
    // Nothing in Lumen deletes an alert, so no index serves the check of this foreign key:
    // without one each deleted alert's check reads the whole table (a minute here).
    await client.query('CREATE INDEX floor_idempotency_alert ON idempotency_key (alert_id)');
    await client.query('DELETE FROM alert_status_history WHERE alert_id IN (SELECT id FROM floor_alert)');
    await client.query('DELETE FROM alert WHERE id IN (SELECT id FROM floor_alert)');
    await client.query('DELETE FROM service_order_status_history WHERE service_order_id IN (SELECT service_order_id FROM floor_alert)');
    await client.query('DELETE FROM service_order WHERE id IN (SELECT service_order_id FROM floor_alert)');
    await client.query('DROP INDEX floor_idempotency_alert');
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
  await pool.query('VACUUM (ANALYZE) idempotency_key, alert_status_history, alert, service_order_status_history, service_order');
}

function stopFloor(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.disconnect();
  });
}

/**
 * POST /api/external/service-orders in automatic mode, coordinates given, every
 * request a new protocolNumber and Idempotency-Key, at 16 and 64 connections
 * (wrk, a C client like the anchor's; autocannon when wrk is missing), against
 * pgbench running the same writes as one SQL transaction at the same number of
 * clients. Lumen and anchor runs alternate, so drift of a shared machine hits both
 * alike. Beside each ratio: CPU per request of Lumen, PostgreSQL and the client,
 * and per transaction of PostgreSQL and pgbench.
 */
export const intakeRow: RowDefinition = {
  id: 'intake',
  title: 'Intake: POST service-orders, automatic mode',
  async run(ctx) {
    const server = await ctx.lumen();
    const tenant = await ctx.createTenant('Bench intake', 'automatic');
    const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateServiceOrders'] });

    const client = new HttpClient(server.baseUrl, { 'x-api-key': partner.apiKey });
    const probe = await client.postJson('/api/external/service-orders', intakeBody(`BENCH-probe-${Date.now()}`));
    client.close();
    if (isNotBuilt(probe)) throw new Pending('intake (POST /api/external/service-orders) not built yet');
    if (probe.status !== 201) throw new Error(`probe intake answered ${probe.status}: ${probe.body.toString('utf8').slice(0, 500)}`);
    const created = json<{ status: string; internalProtocol?: string }>(probe, 'probe intake');
    if (created.status !== 'OPEN' || !created.internalProtocol) throw new Error(`probe intake did not create an order (automatic mode): ${JSON.stringify(created)}`);

    const year = new Date().getUTCFullYear();
    const notes: string[] = [];
    // The floor runs only under wrk (autocannon would share the cores with it), with a
    // partner of its own so that its rows can be removed after the row.
    const floorPartner = ctx.tools.wrk ? await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateServiceOrders'] }) : null;
    const floor = floorPartner ? await startFloor(ctx.repo, { databaseUrl: ctx.db.url, tenant: tenant.id, partner: floorPartner.id, year }) : null;
    if (!ctx.tools.pgbench) notes.push('pgbench is missing, so the anchor was skipped: install it with `apt-get install postgresql-contrib` (Debian) and run again.');
    const lines: Line[] = [];
    try {
      for (const connections of ctx.sizes.intakeConnections) {
        const load = async (seconds: number, target: { url: string; pid: number } = { url: server.baseUrl, pid: server.pid }): Promise<LoadResult & Measured> => {
          const gcNow = () => (target.pid === server.pid ? lumenGc(server.baseUrl) : floor && target.pid === floor.pid ? floorGc(floor.child) : Promise.resolve(null));
          const gcBefore = await gcNow();
          const wal = await measureWal(ctx.pool);
          const sampler = new CpuSampler(ctx.db.name, target.pid).start();
          let r: LoadResult;
          if (ctx.tools.wrk) {
            r = await runWrk(ctx.tools.wrk, {
              url: target.url,
              path: '/api/external/service-orders',
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': partner.apiKey, 'accept-language': 'en' },
              body: JSON.stringify(intakeBody('BENCH-__UNIQUE__')),
              uuidHeader: 'idempotency-key',
              connections,
              seconds,
              scriptDir: ctx.tmpDir,
            });
          } else {
            const m = await runDriverMeasured<IntakeLoadResult>(ctx.repo, 'intake-load.ts', { url: server.baseUrl, apiKey: partner.apiKey, connections, seconds });
            r = { client: 'autocannon', ...m.result, clientCpuMs: m.cpuMs };
          }
          const cpu = perRequest(sampler.stop(), r.clientCpuMs, r.status2xx);
          const walDuring = await wal();
          const gcAfter = await gcNow();
          return { ...r, cpu, wal: walDuring, gc: gcBefore && gcAfter ? gcDelta(gcAfter, gcBefore) : null };
        };
        let anchorNote: string | null = ctx.tools.pgbench ? null : 'pgbench missing';
        const anchor = async (seconds: number): Promise<(PgbenchResult & Measured) | null> => {
          if (!ctx.tools.pgbench || anchorNote) return null;
          const free = await freeConnections(ctx.pool);
          if (free < connections + 2) {
            anchorNote = `the server had ${free} free connections, pgbench needs ${connections}`;
            notes.push(`The ${connections}-client anchor was skipped: ${anchorNote} (raise max_connections, or run when fewer clients are connected).`);
            return null;
          }
          const wal = await measureWal(ctx.pool);
          const sampler = new CpuSampler(ctx.db.name, null).start();
          const result = await runPgbench(ctx.tools.pgbench, ctx.db.url, {
            scriptFile: path.join(ctx.repo, ANCHOR_SCRIPT),
            clients: connections,
            threads: os.cpus().length,
            seconds,
            vars: { tenant: tenant.id, partner: partner.id, year: String(year) },
            logDir: ctx.tmpDir,
          });
          const cpu = perRequest(sampler.stop(), result.clientCpuMs, result.transactions);
          return { ...result, cpu, wal: await wal(), gc: null };
        };

        const floorTarget = floor && connections === FLOOR_CONNECTIONS ? { url: `http://127.0.0.1:${floor.port}`, pid: floor.pid } : null;
        ctx.log(`intake at ${connections} connections: warm-up`);
        await load(ctx.sizes.intakeWarmupSeconds);
        if (floorTarget) await load(ctx.sizes.intakeWarmupSeconds, floorTarget);
        // The row starts on an empty database, which autovacuum has not analyzed yet when
        // the warm-up ends (its naptime is a minute). A statement's generic plan is made
        // from those statistics and kept by each connection until they change: made on
        // near-empty tables, it may look the partner's alert up by the wrong index and read
        // every alert the partner has sent on every request. A service that has run for a
        // minute has its tables analyzed; so does the row (ANALYZE also makes every
        // connection plan again).
        await ctx.pool.query('ANALYZE');
        const lumenRuns: (LoadResult & Measured)[] = [];
        const anchorRuns: (PgbenchResult & Measured)[] = [];
        const floorRuns: (LoadResult & Measured)[] = [];
        for (let i = 0; i < ctx.opts.runs; i++) {
          ctx.log(`intake at ${connections} connections: run ${i + 1}/${ctx.opts.runs}`);
          const r = await load(ctx.sizes.intakeSeconds);
          if (r.non2xx > 0 || r.errors > 0) {
            throw new Error(`intake load got ${r.non2xx} non-2xx answers and ${r.errors} errors${r.statusCodes ? `: ${JSON.stringify(r.statusCodes)}` : ''}`);
          }
          lumenRuns.push(r);
          const a = await anchor(ctx.sizes.intakeSeconds);
          if (a) {
            if (a.failed > 0) throw new Error(`pgbench anchor had ${a.failed} failed transactions`);
            anchorRuns.push(a);
          }
          if (floorTarget) {
            const f = await load(ctx.sizes.intakeSeconds, floorTarget);
            if (f.non2xx > 0 || f.errors > 0) throw new Error(`the intake floor got ${f.non2xx} non-2xx answers and ${f.errors} errors`);
            floorRuns.push(f);
          }
        }
        const rate = series('req/s', lumenRuns.map((r) => r.status2xx / r.seconds), median);
        const p99 = median(lumenRuns.map((r) => r.latencyMs.p99));
        const p50 = median(lumenRuns.map((r) => r.latencyMs.p50));
        const anchorSeries = anchorRuns.length ? series('tx/s', anchorRuns.map((a) => a.tps), median) : null;
        const ratio = ratioOf(rate, anchorSeries);
        const checks = [check('≥ 60% of the anchor', ratio === null ? null : ratio >= 0.6)];
        if (connections === 16) checks.push(check('p99 ≤ 40 ms', p99 <= 40));
        const anchorP99 = anchorRuns.length ? median(anchorRuns.map((a) => a.latencyP99Ms ?? NaN)) : null;
        // Each run's p99 beside the median: the tail differs from run to run more than the
        // rate (bench/FINDINGS.md); with each run's WAL per request and the pages the
        // checkpointer wrote during it, which say where in a checkpoint cycle it fell.
        const eachRun = (p99s: number[], runs: { wal: WalDuring }[], requests: number[]): string =>
          p99s.length > 1
            ? ` (runs ${p99s.map((v) => v.toFixed(1)).join(', ')}; WAL ${runs.map((r, i) => (r.wal.walBytes / Math.max(1, requests[i]!) / 1024).toFixed(1)).join(', ')} kB per request;` +
              ` checkpointer ${runs.map((r) => r.wal.checkpointPages).join(', ')} pages)`
            : '';
        const floorDetail = floorRuns.length
          ? `; floor (plain Node server, the anchor's two statements): ${Math.round(median(floorRuns.map((f) => f.status2xx / f.seconds)))} req/s, ` +
            `p50 ${median(floorRuns.map((f) => f.latencyMs.p50)).toFixed(1)} ms, p99 ${median(floorRuns.map((f) => f.latencyMs.p99)).toFixed(1)} ms${eachRun(floorRuns.map((f) => f.latencyMs.p99), floorRuns, floorRuns.map((f) => f.status2xx))}, ` +
            `CPU per request: ${describeCpu(medianCpu(floorRuns.map((f) => f.cpu)), 'wrk', 'floor')}${perRunSchedule(floorRuns, 'the floor')}`
          : '';
        lines.push({
          label: `${connections} connections`,
          lumen: rate,
          detail:
            `latency p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms${eachRun(lumenRuns.map((r) => r.latencyMs.p99), lumenRuns, lumenRuns.map((r) => r.status2xx))}` +
            (anchorP99 !== null ? `; anchor p99 ${anchorP99.toFixed(1)} ms${eachRun(anchorRuns.map((a) => a.latencyP99Ms ?? NaN), anchorRuns, anchorRuns.map((a) => a.transactions))}` : '') +
            `; CPU per request: ${describeCpu(medianCpu(lumenRuns.map((r) => r.cpu)), lumenRuns[0]?.client ?? 'client')}${perRunSchedule(lumenRuns, 'Lumen')}` +
            (anchorRuns.length ? `; per anchor transaction: ${describeCpu(medianCpu(anchorRuns.map((a) => a.cpu)), 'pgbench')}${perRunSchedule(anchorRuns, 'pgbench')}` : '') +
            floorDetail,
          anchor: { label: `pgbench, same writes, ${connections} clients`, series: anchorSeries, ...(anchorSeries ? {} : { note: anchorNote ?? 'not measured' }) },
          ratio,
          checks,
        });
        if (anchorRuns[0]) notes.push(`Anchor command: \`${anchorRuns[0].command}\`.`);
      }
    } finally {
      if (floor) await stopFloor(floor.child);
      if (floorPartner) await removeFloorRows(ctx.pool, floorPartner.id);
    }
    notes.push(
      ctx.tools.wrk
        ? 'Load: wrk (C), a new protocolNumber and Idempotency-Key per request from its Lua script. CPU per request is each process\'s CPU time over the run (from /proc) divided by the answers: Lumen\'s process, the PostgreSQL backends of the bench database with its WAL and buffer writers, and the client.'
        : 'Load: autocannon (wrk is missing: `apt-get install wrk`), which shares the cores with Lumen. CPU per request is each process\'s CPU time over the run (from /proc) divided by the answers.',
      'The anchor writes exactly the rows the POST writes, in the same two statements: both numbers from the city\'s sequences in one statement committed on its own (synchronous_commit off for it), then the numbered order and its status history, the alert and its status history and the idempotency row with the stored response in one statement (see bench/sql/intake-anchor.pgbench.sql). It writes no event: intake emits none (ServiceOrder.Created is for orders an operator creates, per the contract).',
      'The floor (bench/drivers/intake-floor.ts, at 16 connections, under wrk only) is the plainest Node HTTP server doing the same writes: it parses the body and runs the anchor\'s two statements as named prepared statements through a pool of Lumen\'s default size (10), with no authentication, validation, idempotency lookup or hash. It shows what any Node server on the same cores pays above the anchor, and what Lumen pays above that; its runs alternate with Lumen\'s and the anchor\'s, under a partner of its own whose rows are deleted (and the tables vacuumed) at the end of the row.',
      "Per run, beside the p99s: the Node servers' garbage-collection pauses in the run (Lumen's from its own /metrics, the floor's from a PerformanceObserver) and how long the server's main thread was ready to run but waited for a core, per request, with the same wait summed over the PostgreSQL processes (each thread's /proc/<pid>/schedstat): on cores shared by the server, PostgreSQL and the client, a request's tail is made of those waits.",
      'After each warm-up the bench database is analyzed (ANALYZE), as autovacuum does within a minute of a service\'s start: plans made from the statistics of the freshly migrated, empty tables would otherwise be kept by every connection for the whole row.',
    );
    return {
      lines,
      notes: [...new Set(notes)],
      params: { client: ctx.tools.wrk ? 'wrk' : 'autocannon', connections: ctx.sizes.intakeConnections.join(','), seconds: ctx.sizes.intakeSeconds, warmupSeconds: ctx.sizes.intakeWarmupSeconds, runs: ctx.opts.runs },
    };
  },
};

