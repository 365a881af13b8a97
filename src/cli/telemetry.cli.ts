import type { Command } from 'commander';
import { ingestTelemetryFile, type TelemetryFileSummary } from '../services/city-data/index.js';
import { createTelemetryKey, listKeys, revokeKey, type TelemetryKeyView } from '../services/city-data/index.js';
import { getTenant } from '../services/tenants/index.js';
import { CliError, jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

const describe = (k: TelemetryKeyView): string => `${k.keyPrefix}…  ${k.name}  tenant=${k.tenantId}  created=${k.createdAt}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ''}`;

export function registerTelemetryCommands(program: Command, io: CliIo): void {
  const telemetry = program.command('telemetry').description('device telemetry: keys of telemetry systems and report files');
  const key = telemetry.command('key').description('keys of telemetry systems (POST /api/telemetry/reports)');

  jsonOption(
    key
      .command('create')
      .description('issue a telemetry key for a tenant (printed once)')
      .requiredOption('--tenant <id>', 'tenant id')
      .option('--name <name>', 'label of the telemetry system', 'telemetry'),
  ).action(async (opts: JsonOption & { tenant: string; name: string }) => {
    const k = await withRuntime(io, (rt) => createTelemetryKey(rt, { tenantId: opts.tenant, name: opts.name }));
    printResult(io, opts, k, () =>
      [
        `Created telemetry key ${describe(k)}`,
        `Telemetry key (shown once, store it now):\n  ${k.apiKey}`,
        `Try it: curl -X POST -H "X-Api-Key: ${k.apiKey}" -H "Content-Type: application/json" \\`,
        `  -d '{"reports":[{"deviceIdentifier":"TG-0001","online":true,"relayOn":true,"reportedAt":"${new Date().toISOString()}"}]}' \\`,
        `  http://localhost:8080/api/telemetry/reports`,
      ].join('\n'),
    );
  });

  jsonOption(key.command('list').description("list a tenant's telemetry keys").requiredOption('--tenant <id>', 'tenant id')).action(async (opts: JsonOption & { tenant: string }) => {
    const keys = await withRuntime(io, (rt) => listKeys(rt, opts.tenant));
    printResult(io, opts, { keys }, () => (keys.length ? keys.map(describe).join('\n') : 'No telemetry keys yet.'));
  });

  jsonOption(key.command('revoke').description('revoke a telemetry key at once').argument('<prefix>', 'key prefix (lmn_tel_XXXXXXXX) or id')).action(async (prefix: string, opts: JsonOption) => {
    const k = await withRuntime(io, (rt) => revokeKey(rt, prefix));
    printResult(io, opts, k, () => `Revoked ${describe(k)}`);
  });

  jsonOption(
    telemetry
      .command('ingest')
      .description('apply device reports from an NDJSON file (one {deviceIdentifier, online, relayOn, reportedAt} per line; "-" reads stdin); progress on stderr; Ctrl-C stops after the batch in progress and says where to resume')
      .requiredOption('--tenant <id>', 'tenant id')
      .option('--skip-lines <n>', 'pass over the first n lines (resume where a stopped run said)', '0')
      .argument('<file>', 'NDJSON file'),
  ).action(async (file: string, opts: JsonOption & { tenant: string; skipLines: string }) => {
    if (!/^\d+$/.test(opts.skipLines)) throw new CliError('--skip-lines takes a whole number of lines', 2);
    const skipLines = Number(opts.skipLines);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let lastPrint = 0;
    const progress = (s: Readonly<TelemetryFileSummary>) => {
      if (Date.now() - lastPrint < 1000) return;
      lastPrint = Date.now();
      io.stderr.write(`telemetry ingest: lines 1..${s.doneThroughLine} applied (${s.applied} report(s) applied so far)\n`);
    };
    let summary: TelemetryFileSummary;
    try {
      summary = await withRuntime(io, async (rt) => {
        await getTenant(rt, opts.tenant);
        return ingestTelemetryFile(rt, opts.tenant, file === '-' ? process.stdin : file, { skipLines, onProgress: progress, signal: stop.signal });
      });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    printResult(io, opts, summary, () => {
      const lines = [
        `Read ${summary.lines} line(s): ${summary.received} report(s), ${summary.applied} applied, ${summary.stale} stale (not newer than the stored state), ${summary.unknown} for unknown devices, ${summary.invalid} invalid.`,
      ];
      if (summary.unknownDevices.length) lines.push(`Unknown devices: ${summary.unknownDevices.slice(0, 20).join(', ')}${summary.unknownDevices.length > 20 ? ', …' : ''}`);
      for (const e of summary.errors.slice(0, 50)) lines.push(`  line ${e.line}: ${e.message}`);
      if (summary.invalid > 50) lines.push(`  … ${summary.invalid - 50} more (use --json for up to 1000)`);
      return lines.join('\n');
    });
    if (summary.stopped) {
      const resume = `lumen telemetry ingest --tenant ${opts.tenant} --skip-lines ${summary.doneThroughLine} ${file}`;
      throw new CliError(`stopped: lines 1..${summary.doneThroughLine} are applied; resume with: ${resume}`, 130);
    }
  });
}
