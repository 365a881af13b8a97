import { Option, type Command } from 'commander';
import type { PoleImportSummary } from '../services/city-data/index.js';
import { importPoles, UnusableFileError } from '../services/city-data/index.js';
import type { Progress } from '../services/city-data/index.js';
import type { MapPoles, PoleDetail } from '../../generated/admin/types.gen.js';
import { mapPoles, poleByCode } from '../services/operations/index.js';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import { CliError, jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

/** A progress bar on stderr, drawn only on a terminal (at most ten times a second). */
function progressBar(io: CliIo): { update(p: Progress & { phase: 'reading' | 'applying' }): void; done(): void } {
  const tty = (io.stderr as NodeJS.WriteStream).isTTY === true;
  let last = 0;
  let drawn = false;
  const width = 30;
  return {
    update(p) {
      if (!tty) return;
      const now = Date.now();
      if (p.phase === 'reading' && now - last < 100) return;
      last = now;
      let line: string;
      if (p.phase === 'applying') line = `Applying ${p.rows.toLocaleString('en')} rows in one transaction…`;
      else {
        const ratio = p.totalBytes > 0 ? Math.min(1, p.bytes / p.totalBytes) : 0;
        const full = Math.round(ratio * width);
        line = `Reading [${'#'.repeat(full)}${'.'.repeat(width - full)}] ${String(Math.round(ratio * 100)).padStart(3)}%  ${p.rows.toLocaleString('en')} rows`;
      }
      io.stderr.write(`\r\u001b[2K${line}`);
      drawn = true;
    },
    done() {
      if (drawn) io.stderr.write('\r\u001b[2K');
    },
  };
}

function human(s: PoleImportSummary): string {
  const lines = [
    `${s.committed ? 'Imported' : 'Checked (nothing imported)'} ${s.file} (${s.format}): ${s.rows} row(s), ${s.created} created, ${s.updated} updated, ${s.unchanged} unchanged, ${s.rejected} rejected.`,
    `Telegestors: ${s.devices.created} created, ${s.devices.linked} linked to a pole, ${s.devices.unlinked} unlinked.`,
  ];
  for (const e of s.errors.slice(0, 50)) lines.push(`  ${s.rowUnit} ${e.line}${e.code ? ` (${e.code})` : ''}: ${e.message}`);
  if (s.rejected > 50) lines.push(`  … ${s.rejected - 50} more rejected row(s) (--json lists up to 1000)`);
  return lines.join('\n');
}

export function registerPoleCommands(program: Command, io: CliIo): void {
  const pole = program.command('pole').description("the city's poles and their telegestors");

  jsonOption(
    pole
      .command('import')
      .description(
        'create or update poles from a CSV (header code,address,neighborhood,latitude,longitude,active,device_identifier) or GeoJSON file (Point features with the same properties, deviceIdentifier); idempotent by code',
      )
      .requiredOption('--tenant <id>', 'tenant id')
      .argument('<file>', 'CSV, GeoJSON FeatureCollection, or one GeoJSON Feature per line')
      .option('--strict', 'import nothing when any row is rejected')
      .option('--dry-run', 'check the file and count what would change, then import nothing')
      .addOption(new Option('--format <format>', 'file format (default: from the extension or the content)').choices(['csv', 'geojson', 'geojson-seq'])),
  ).action(async (file: string, opts: JsonOption & { tenant: string; strict?: boolean; dryRun?: boolean; format?: 'csv' | 'geojson' | 'geojson-seq' }) => {
    const bar = progressBar(io);
    let summary: PoleImportSummary;
    try {
      summary = await withRuntime(io, (rt) => importPoles(rt, opts.tenant, file, { strict: opts.strict, dryRun: opts.dryRun, format: opts.format, onProgress: (p) => bar.update(p) }));
    } catch (err) {
      bar.done();
      if (err instanceof UnusableFileError) throw new CliError(`nothing imported: ${err.message}`);
      throw err;
    }
    bar.done();
    printResult(io, opts, summary, () => human(summary));
    if (opts.strict && summary.rejected > 0) throw new CliError(`nothing imported: ${summary.rejected} row(s) rejected and --strict was given`);
  });

  jsonOption(
    pole
      .command('near')
      .description("a tenant's active poles within --radius metres of a point, nearest first, with their telegestor's state")
      .requiredOption('--tenant <id>', 'tenant id')
      .requiredOption('--at <lat,lon>', 'the point, latitude,longitude')
      .option('--radius <metres>', 'metres around the point (at most 2000)', '100')
      .option('--limit <n>', 'at most this many poles', '50'),
  ).action(async (opts: JsonOption & { tenant: string; at: string; radius: string; limit: string }) => {
    const out = await withRuntime(io, (rt) => mapPoles(rt, PLATFORM_ACCESS, { tenantId: opts.tenant, near: opts.at, radius: opts.radius, limit: opts.limit }));
    printResult(io, opts, out, () => describeMapPoles(out));
  });

  jsonOption(
    pole
      .command('box')
      .description("a tenant's active poles inside a box (at most --limit; says when there are more)")
      .requiredOption('--tenant <id>', 'tenant id')
      .requiredOption('--bbox <s,w,n,e>', 'south,west,north,east in degrees')
      .option('--limit <n>', 'at most this many poles (5000 at most)', '500'),
  ).action(async (opts: JsonOption & { tenant: string; bbox: string; limit: string }) => {
    const out = await withRuntime(io, (rt) => mapPoles(rt, PLATFORM_ACCESS, { tenantId: opts.tenant, bbox: opts.bbox, limit: opts.limit }));
    printResult(io, opts, out, () => describeMapPoles(out));
  });

  jsonOption(
    pole
      .command('show')
      .description("one pole of a tenant by its code: its telegestor and its changes of state, the orders and alerts on it (GET /api/admin/tenants/{tenantId}/poles/{poleCode})")
      .requiredOption('--tenant <id>', 'tenant id')
      .option('--states <n>', 'at most this many changes of state (200 at most)', '20')
      .argument('<code>', "the pole's code"),
  ).action(async (code: string, opts: JsonOption & { tenant: string; states: string }) => {
    const out = await withRuntime(io, (rt) => poleByCode(rt, PLATFORM_ACCESS, { tenantId: opts.tenant, code, states: opts.states }, 'en'));
    printResult(io, opts, out, () => describePole(out));
  });
}

function describePole(p: PoleDetail): string {
  const g = p.telegestor;
  const lines = [
    `${p.code}  ${p.address} - ${p.neighborhood}  ${p.latitude},${p.longitude}${p.active ? '' : '  (inactive)'}  id=${p.id}`,
    g ? `telegestor ${g.identifier}: online=${g.online ?? 'unknown'} relayOn=${g.relayOn ?? 'unknown'} last=${g.lastCommunicationAt ?? 'never'}` : 'no telegestor',
    ...p.states.map((s) => `  ${s.reportedAt}  online=${s.online} relayOn=${s.relayOn ?? 'unknown'}`),
    `orders: ${p.serviceOrders.length === 0 ? 'none' : p.serviceOrders.map((o) => `${o.number} ${o.status}`).join(', ')}`,
    `alerts: ${p.alerts.length === 0 ? 'none' : p.alerts.map((a) => `#${a.alertNumber} ${a.status}`).join(', ')}`,
  ];
  return lines.join('\n');
}

function describeMapPoles(out: MapPoles): string {
  if (out.items.length === 0) return 'No poles there.';
  const lines = out.items.map((p) => `${p.code}  ${p.telegestorState}${p.distanceMeters !== null ? `  ${p.distanceMeters} m` : ''}  ${p.address} - ${p.neighborhood}  ${p.latitude},${p.longitude}  id=${p.id}`);
  return [...lines, ...(out.truncated ? ['(more poles in this box: zoom in or raise --limit)'] : [])].join('\n');
}
