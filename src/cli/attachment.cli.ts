import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { attachmentContent, attachmentFailures, dismissAttachmentFailure, retryAttachmentFailure, type AttachmentFailureView } from '../services/attachments/index.js';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import { TENANT_HINT, alertRefOf } from './refs.js';
import { CliError, jsonOption, printResult, withRuntime, type CliIo, type JsonOption, cliActorOf } from './context.js';

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
      .option('--limit <n>', 'at most this many, 1..1000', '100')
      .option('--include-dismissed', 'also the ones an operator dismissed'),
  ).action(async (opts: JsonOption & { tenant: string; since?: string; limit: string; includeDismissed?: boolean }) => {
    const limit = Number(opts.limit);
    if (!/^\d+$/.test(opts.limit) || limit < 1 || limit > 1000) throw new CliError('--limit must be a whole number from 1 to 1000', 2);
    const since = opts.since === undefined ? undefined : new Date(opts.since);
    if (since && Number.isNaN(since.getTime())) throw new CliError('--since must be an ISO 8601 time, such as 2026-03-14T00:00:00Z', 2);
    const failures = await withRuntime(io, (rt) => attachmentFailures(rt, opts.tenant, { limit, since, includeDismissed: opts.includeDismissed ?? false }));
    printResult(io, opts, { failures }, () => (failures.length ? failures.map(describe).join('\n') : 'No failed attachment downloads.'));
  });

  jsonOption(attachment.command('retry').description('download a failed attachment URL again now; stored and removed from the queue when it works').argument('<failureId>', 'failure id')).action(
    async (id: string, opts: JsonOption) => {
      const r = await withRuntime(io, (rt) => retryAttachmentFailure(rt, cliActorOf(rt), id));
      printResult(io, opts, r, () => (r.resolved ? 'Downloaded and stored; removed from the queue.' : `Still failing: ${describe(r.failure!)}`));
    },
  );

  jsonOption(attachment.command('dismiss').description('mark a failed attachment URL as looked at (it leaves the queue and the counts)').argument('<failureId>', 'failure id')).action(
    async (id: string, opts: JsonOption) => {
      const f = await withRuntime(io, (rt) => dismissAttachmentFailure(rt, cliActorOf(rt), id));
      printResult(io, opts, f, () => `Dismissed ${describe(f)}`);
    },
  );

  jsonOption(
    attachment
      .command('get')
      .description("write an alert's stored photo to a file")
      .argument('<alert>', 'alert id or number (42, #42)')
      .argument('<attachmentId>', 'attachment id')
      .requiredOption('--out <file>', 'where to write the image')
      .option(...TENANT_HINT),
  ).action(async (alert: string, attachmentId: string, opts: JsonOption & { out: string; tenant?: string }) => {
    const got = await withRuntime(io, async (rt) => attachmentContent(rt, PLATFORM_ACCESS, await alertRefOf(rt, alert, opts.tenant), attachmentId));
    writeFileSync(opts.out, got.bytes);
    const out = { file: opts.out, contentType: got.contentType, bytes: got.bytes.length, sha256: got.sha256 };
    printResult(io, opts, out, () => `Wrote ${out.bytes} bytes (${out.contentType}) to ${out.file}`);
  });
}
