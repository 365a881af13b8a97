import { Option, type Command } from 'commander';
import type { PoleImportSummary } from '../services/city-data/index.js';
import { importPoles, UnusableFileError } from '../services/city-data/index.js';
import type { Progress } from '../services/city-data/index.js';
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
}
