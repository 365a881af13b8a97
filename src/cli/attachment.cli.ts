import type { Command } from 'commander';
import { attachmentFailures, type AttachmentFailureView } from '../services/attachments/index.js';
import { CliError, jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

const describe = (f: AttachmentFailureView): string =>
  `${f.createdAt}  ${f.partner}  ${f.protocolNumber}  alert #${f.alertNumber}  ${f.errorCode} (${f.detail}, ${f.attempts} attempt(s))\n    ${f.url}`;

export function registerAttachmentCommands(program: Command, io: CliIo): void {
  const attachment = program.command('attachment').description('attachments of requests');

  jsonOption(
    attachment
      .command('failures')
      .description('attachment URLs that could not be downloaded, newest first, for manual review')
      .requiredOption('--tenant <id>', 'tenant id')
      .option('--since <time>', 'only failures at or after this ISO 8601 time')
      .option('--limit <n>', 'at most this many, 1..1000', '100'),
  ).action(async (opts: JsonOption & { tenant: string; since?: string; limit: string }) => {
    const limit = Number(opts.limit);
    if (!/^\d+$/.test(opts.limit) || limit < 1 || limit > 1000) throw new CliError('--limit must be a whole number from 1 to 1000', 2);
    const since = opts.since === undefined ? undefined : new Date(opts.since);
    if (since && Number.isNaN(since.getTime())) throw new CliError('--since must be an ISO 8601 time, such as 2026-03-14T00:00:00Z', 2);
    const failures = await withRuntime(io, (rt) => attachmentFailures(rt, opts.tenant, { limit, since }));
    printResult(io, opts, { failures }, () => (failures.length ? failures.map(describe).join('\n') : 'No failed attachment downloads.'));
  });
}
