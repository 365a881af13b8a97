import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { HttpClient, json } from '../harness/http.js';
import { hasCommand, lumenCli, lumenJson } from '../harness/lumen.js';
import { literal } from '../harness/postgres.js';
import { check, ratioOf, series, type Line, type Series } from '../harness/results.js';
import { median, msSince } from '../harness/stats.js';
import { poleCity } from '../harness/seed.js';
import { runOk } from '../harness/tools.js';
import { Pending, type BenchContext, type RowDefinition } from '../harness/context.js';

const SENDERS = 4;

interface Report {
  deviceIdentifier: string;
  online: boolean;
  relayOn: boolean | null;
  reportedAt: string;
}

interface IngestAnswer {
  received: number;
  applied: number;
  stale: number;
  unknownDevices: string[];
}

/**
 * The reports of one pass: `total` reports over the devices in order, batches of
 * `batch` consecutive ones; round r of the devices is dated `base` + r seconds, so
 * every report is newer than the pass before (each is applied, none stale, unless a
 * later round of a device overtakes an earlier one between two senders). One device
 * in a hundred is unknown to the tenant (listed, never an error).
 */
function reportsOf(devices: readonly string[], total: number, batch: number, base: number): Report[][] {
  const batches: Report[][] = [];
  for (let from = 0; from < total; from += batch) {
    const reports: Report[] = [];
    for (let k = from; k < Math.min(total, from + batch); k++) {
      const d = k % devices.length;
      const round = Math.floor(k / devices.length);
      reports.push({
        deviceIdentifier: k % 100 === 99 ? `UNKNOWN-${k}` : devices[d]!,
        online: (k + round) % 13 !== 0,
        relayOn: (k + round) % 5 === 0 ? null : (k + round) % 2 === 0,
        reportedAt: new Date(base + round * 1000).toISOString(),
      });
    }
    batches.push(reports);
  }
  return batches;
}

const sqlArray = (values: readonly (string | boolean | null)[]) => literal(`{${values.map((v) => (v === null ? 'NULL' : typeof v === 'boolean' ? String(v) : `"${v}"`)).join(',')}}`);

/**
 * The bare SQL of one batch: the set-based update Lumen's telemetry repository runs
 * (src/db/repositories/city-data/telemetry.repository.ts), same triggers, the
 * reports as array literals, one autocommitted statement, no lock taken first.
 */
function batchSql(tenantId: string, reports: readonly Report[]): string {
  return `UPDATE telegestor t
   SET online = r.online, relay_on = r.relay_on, last_communication_at = r.reported_at,
       offline_since = CASE WHEN r.online THEN NULL ELSE coalesce(t.offline_since, r.reported_at) END,
       relay_off_since = CASE WHEN r.relay_on IS FALSE THEN coalesce(t.relay_off_since, r.reported_at)
                              WHEN r.relay_on IS TRUE THEN NULL ELSE t.relay_off_since END
  FROM unnest(${sqlArray(reports.map((r) => r.deviceIdentifier))}::text[], ${sqlArray(reports.map((r) => r.online))}::boolean[],
              ${sqlArray(reports.map((r) => r.relayOn))}::boolean[], ${sqlArray(reports.map((r) => r.reportedAt))}::timestamptz[])
       AS r(identifier, online, relay_on, reported_at)
 WHERE t.tenant_id = ${literal(tenantId)} AND t.identifier = r.identifier
   AND (t.last_communication_at IS NULL OR r.reported_at > t.last_communication_at);`;
}

/** Each sender takes the next batch until none is left; the wall time of the whole pass, in ms. */
async function senders<T>(count: number, batches: readonly T[], send: (batch: T) => Promise<void>): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: count }, async () => {
      for (let b = next++; b < batches.length; b = next++) await send(batches[b]!);
    }),
  );
  return msSince(started);
}

/** Sequential page requests until `stop` resolves; their times in ms. */
async function pagesUntil(client: HttpClient, pagePath: string, stop: Promise<unknown>): Promise<number[]> {
  let done = false;
  void stop.finally(() => (done = true));
  const times: number[] = [];
  while (!done) {
    const r = await client.get(pagePath);
    if (r.status !== 200) throw new Error(`GET ${pagePath} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
    times.push(r.ms);
  }
  return times;
}

/**
 * A fleet's telemetry: N reports in batches of 1000 from 4 concurrent senders to
 * POST /api/telemetry/reports, over the telegestors of the read rows' city, in
 * reports/s. Anchor: the same set-based UPDATE of the same batches through 4
 * concurrent psql sessions (one statement per batch, nothing else). Second line:
 * `lumen telemetry ingest` of the same number of reports as an NDJSON file, against
 * one psql session running the batches. Third: a partner's page of 1000 poles (p50)
 * while the HTTP ingest runs, against the same page idle.
 */
export const telemetryRow: RowDefinition = {
  id: 'telemetry',
  title: "Telemetry: a fleet's reports",
  async run(ctx: BenchContext) {
    if (!(await hasCommand(ctx.setup, ['telemetry', 'ingest']))) throw new Pending('telemetry ingest not built yet');
    const server = await ctx.lumen();
    const city = await poleCity(ctx);
    const { telemetryReports: total, telemetryBatch: batch, pageSize, pageRepeats } = ctx.sizes;
    const key = await lumenJson<{ apiKey: string }>(ctx.setup, ['telemetry', 'key', 'create', '--tenant', city.tenantId, '--name', 'bench']);
    const partner = await ctx.createPartner({ tenantId: city.tenantId, scopes: ['canReadCityData'] });
    const { rows } = await ctx.pool.query<{ identifier: string }>(`SELECT identifier FROM telegestor WHERE tenant_id = $1 ORDER BY identifier`, [city.tenantId]);
    const devices = rows.map((r) => r.identifier);
    const rounds = Math.ceil(total / devices.length);
    // Every pass dates its reports after the previous one's (the first after the seed's
    // last reports), all within the 5-minute clock guard: every report is applied.
    let base = Date.now();
    const nextBase = () => {
      const b = base;
      base += (rounds + 1) * 1000;
      return b;
    };

    const telemetry = new HttpClient(server.baseUrl, { 'x-api-key': key.apiKey });
    const reader = new HttpClient(server.baseUrl, { 'x-api-key': partner.apiKey });
    const pagePath = `/api/external/poles?page=1&pageSize=${pageSize}`;
    for (let i = 0; i < 3; i++) await reader.get(pagePath);
    const idle: number[] = [];
    for (let run = 0; run < ctx.opts.runs; run++) {
      const times: number[] = [];
      for (let i = 0; i < pageRepeats; i++) times.push((await reader.get(pagePath)).ms);
      idle.push(median(times));
    }

    const http: number[] = [];
    const busy: number[] = [];
    const anchor: number[] = [];
    const cli: number[] = [];
    const cliAnchor: number[] = [];
    let applied = 0;
    let stale = 0;
    let unknown = 0;
    for (let run = 0; run < ctx.opts.runs; run++) {
      ctx.log(`telemetry run ${run + 1}/${ctx.opts.runs}: ${total.toLocaleString('en-US')} reports over HTTP from ${SENDERS} senders`);
      const batches = reportsOf(devices, total, batch, nextBase());
      applied = stale = unknown = 0;
      const ingest = senders(SENDERS, batches, async (reports) => {
        const r = await telemetry.postJson('/api/telemetry/reports', { reports });
        const a = json<IngestAnswer>(r, 'telemetry answer');
        if (r.status !== 200 || a.received !== reports.length) throw new Error(`POST /api/telemetry/reports answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
        applied += a.applied;
        stale += a.stale;
        unknown += a.unknownDevices.length;
      });
      const pages = pagesUntil(reader, pagePath, ingest);
      http.push(total / ((await ingest) / 1000));
      busy.push(median(await pages));

      if (ctx.tools.psql) {
        ctx.log(`telemetry run ${run + 1}/${ctx.opts.runs}: the same UPDATEs through ${SENDERS} psql sessions`);
        const psql = ctx.tools.psql;
        const anchorBatches = reportsOf(devices, total, batch, nextBase());
        const files = Array.from({ length: SENDERS }, (_, s) => {
          const file = path.join(ctx.tmpDir, `telemetry-${s}.sql`);
          writeFileSync(file, anchorBatches.filter((_, b) => b % SENDERS === s).map((reports) => batchSql(city.tenantId, reports)).join('\n'));
          return file;
        });
        anchor.push(total / ((await senders(SENDERS, files, (file) => psqlFile(psql, ctx.db.url, file))) / 1000));
      }

      ctx.log(`telemetry run ${run + 1}/${ctx.opts.runs}: lumen telemetry ingest of an NDJSON file`);
      const fileBatches = reportsOf(devices, total, batch, nextBase());
      const ndjson = path.join(ctx.tmpDir, 'telemetry.ndjson');
      writeFileSync(ndjson, fileBatches.flat().map((r) => JSON.stringify(r)).join('\n') + '\n');
      const r = await lumenCli(ctx.setup, ['telemetry', 'ingest', '--tenant', city.tenantId, ndjson, '--json']);
      if (r.code !== 0) throw new Error(`lumen telemetry ingest exited with ${r.code}: ${r.stderr.trim().slice(-1000)}`);
      cli.push(total / (r.ms / 1000));
      if (ctx.tools.psql) {
        const file = path.join(ctx.tmpDir, 'telemetry-one.sql');
        writeFileSync(file, reportsOf(devices, total, batch, nextBase()).map((reports) => batchSql(city.tenantId, reports)).join('\n'));
        const started = process.hrtime.bigint();
        await psqlFile(ctx.tools.psql, ctx.db.url, file);
        cliAnchor.push(total / (msSince(started) / 1000));
      }
    }
    telemetry.close();
    reader.close();

    const httpRate = series('reports/s', http, median);
    const anchorRate: Series | null = anchor.length ? series('reports/s', anchor, median) : null;
    const ratio = ratioOf(httpRate, anchorRate);
    const cliRate = series('reports/s', cli, median);
    const cliAnchorRate: Series | null = cliAnchor.length ? series('reports/s', cliAnchor, median) : null;
    const idleP50 = series('ms', idle, median);
    const busyP50 = series('ms', busy, median);
    const pageRatio = ratioOf(busyP50, idleP50);
    const lines: Line[] = [
      {
        label: `${total.toLocaleString('en-US')} reports, batches of ${batch}, ${SENDERS} concurrent senders (POST /api/telemetry/reports), ${devices.length.toLocaleString('en-US')} devices`,
        lumen: httpRate,
        detail: `last run: ${applied.toLocaleString('en-US')} applied, ${stale.toLocaleString('en-US')} stale, ${unknown.toLocaleString('en-US')} unknown devices listed`,
        anchor: { label: `the same set-based UPDATE of the same batches, ${SENDERS} psql sessions`, series: anchorRate, ...(anchorRate ? {} : { note: 'psql missing' }) },
        ratio,
        checks: [check('≥ 50% of the bare SQL', ratio === null ? null : ratio >= 0.5)],
      },
      {
        label: `lumen telemetry ingest of ${total.toLocaleString('en-US')} reports (NDJSON file, whole command)`,
        lumen: cliRate,
        anchor: { label: 'the same UPDATEs through one psql session', series: cliAnchorRate, ...(cliAnchorRate ? {} : { note: 'psql missing' }) },
        ratio: ratioOf(cliRate, cliAnchorRate),
        checks: [],
      },
      {
        label: `a partner's page of ${pageSize} poles (p50) during the HTTP ingest`,
        lumen: busyP50,
        anchor: { label: 'the same page with no ingest running', series: idleP50 },
        ratio: pageRatio,
        checks: [check('≤ 2× idle', pageRatio === null ? null : pageRatio <= 2)],
      },
    ];
    return { lines, notes: [], params: { reports: total, batch, senders: SENDERS, devices: devices.length, runs: ctx.opts.runs } };
  },
};

async function psqlFile(psql: string, url: string, file: string): Promise<void> {
  await runOk(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', file, url], { discardStdout: true, env: { ...process.env, PGAPPNAME: 'bench-psql' } });
}
