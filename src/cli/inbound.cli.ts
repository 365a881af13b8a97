import { PLATFORM_ACCESS } from '../services/operators/index.js';
import { type Command, Option } from 'commander';
import type { RejectedStatusFilter } from '../db/repositories/partner-poll.repository.js';
import {
  dismissRejectedItem,
  retryRejectedItem,
  getPartnerPollStatus,
  listRejectedInbound,
  requestedPollEnded,
  pollPartnerNow,
  type PartnerPollStatus,
  type RejectedInboundItemView,
} from '../services/partner-poll/index.js';
import { CliError, jsonOption, printResult, cliActorOf, withRuntime, type CliIo, type JsonOption } from './context.js';

const ago = (at: string | null, now = Date.now()): string => {
  if (!at) return 'never';
  const s = Math.round((now - Date.parse(at)) / 1000);
  const rel = s < 0 ? `in ${-s}s` : s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}min ago` : `${Math.round(s / 3600)}h ago`;
  return `${at} (${rel})`;
};

export function describeStatus(s: PartnerPollStatus): string {
  const lines = [`${s.partner}: ${s.polling ? `polled every ${s.intervalSeconds}s` : `not polled (${s.notPolledBecause})`}`];
  lines.push(`  url:           ${s.pollingUrl ?? '-'}  (key ${s.pollingKeySet ? 'set' : 'NOT SET'})`);
  lines.push(`  cursor:        ${s.cursor ?? '(none yet: the next call has no since)'}`);
  lines.push(`  last success:  ${ago(s.lastSuccessAt)}`);
  lines.push(`  last error:    ${s.lastError ? `${ago(s.lastError.at)} [${s.lastError.kind}] ${s.lastError.message}` : 'none'}`);
  if (s.consecutiveFailures > 0) lines.push(`  failing:       ${s.consecutiveFailures} poll(s) in a row; the cursor stays until a poll succeeds`);
  lines.push(`  lag:           ${s.lagSeconds === null ? 'unknown (never caught up yet)' : `${s.lagSeconds}s since Lumen last held every request`}`);
  lines.push(`  next poll:     ${s.polling ? ago(s.nextPollAt) : '-'}`);
  if (s.lastBatch) lines.push(`  last batch:    ${s.lastBatch.items} item(s), ${s.lastBatch.accepted} accepted, ${s.lastBatch.rejected} rejected, ${s.lastBatch.at}`);
  lines.push(`  totals:        ${s.totals.itemsAccepted} accepted, ${s.totals.itemsRejected} rejected, ${s.totals.pollsSucceeded} polls ok, ${s.totals.pollsFailed} failed`);
  lines.push(`  rejected open: ${s.openRejectedItems}${s.openRejectedItems > 0 ? `  (lumen inbound rejected --partner ${s.partner})` : ''}`);
  return lines.join('\n');
}

function describeRejected(r: RejectedInboundItemView): string {
  const head = `${r.firstSeenAt}  ${r.protocolNumber ?? '(no protocolNumber)'}  ${r.resolvedAt ? `resolved ${r.resolvedAt}` : 'open'}  seen ${r.timesSeen}x  id=${r.id}`;
  return [head, ...r.reasons.map((x) => `    ${x.pointer || '(item)'}: ${x.message}`)].join('\n');
}

const positiveInt = (name: string) => (raw: string): number => {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new CliError(`${name} must be a whole number from 1 (got "${raw}")`, 2);
  return Number(raw);
};

async function waitForPoll(io: CliIo, code: string, timeoutSeconds: number): Promise<PartnerPollStatus> {
  return withRuntime(io, async (rt) => {
    const deadline = Date.now() + timeoutSeconds * 1000;
    for (;;) {
      const status = await getPartnerPollStatus(rt, PLATFORM_ACCESS, code);
      if (requestedPollEnded(status)) return status;
      if (Date.now() > deadline) throw new CliError(`no poll of ${code} ended within ${timeoutSeconds}s: is \`lumen serve\` running?`);
      await new Promise((r) => setTimeout(r, 250));
    }
  });
}

/** `lumen inbound ...`, and `lumen partner status|poll-now` under the partner group. */
export function registerInboundCommands(program: Command, io: CliIo): void {
  const partner = program.commands.find((c) => c.name() === 'partner') ?? program.command('partner').description('partner external systems and their API keys');

  jsonOption(
    partner
      .command('status')
      .description("polling of a partner's endpoint: cursor, last success, last error, lag, next poll")
      .argument('<code>', 'partner code'),
  ).action(async (code: string, opts: JsonOption) => {
    const status = await withRuntime(io, (rt) => getPartnerPollStatus(rt, PLATFORM_ACCESS, code));
    printResult(io, opts, status, () => describeStatus(status));
  });

  jsonOption(
    partner
      .command('poll-now')
      .description("poll a polling-mode partner's endpoint now (a running `lumen serve` does it)")
      .argument('<code>', 'partner code')
      .option('--wait', 'wait until that poll has ended and print the status; exit 1 when it failed')
      .addOption(new Option('--timeout <seconds>', 'with --wait: how long to wait').default(60).argParser(positiveInt('--timeout'))),
  ).action(async (code: string, opts: JsonOption & { wait?: boolean; timeout: number }) => {
    const result = await withRuntime(io, (rt) => pollPartnerNow(rt, code, cliActorOf(rt)));
    if (!opts.wait) {
      printResult(io, opts, result, () =>
        result.state === 'running'
          ? `A poll of ${code} is under way; another follows it at once.`
          : `Poll of ${code} requested at ${result.requestedAt}; a running \`lumen serve\` picks it up at once.`,
      );
      return;
    }
    const status = await waitForPoll(io, code, opts.timeout);
    printResult(io, opts, status, () => describeStatus(status));
    if (status.consecutiveFailures > 0) throw new CliError(`the poll of ${code} failed: [${status.lastError?.kind}] ${status.lastError?.message}`);
  });

  const inbound = program.command('inbound').description("requests read from polling-mode partners' endpoints");
  jsonOption(
    inbound
      .command('rejected')
      .description('items a partner returned that intake refused (kept with their reasons; the batch went on without them)')
      .requiredOption('--partner <code>', 'partner code')
      .addOption(new Option('--status <status>', 'open (no valid resend yet), resolved, or all').choices(['open', 'resolved', 'all']).default('all'))
      .addOption(new Option('--page <n>', 'page, from 1').default(1).argParser(positiveInt('--page')))
      .addOption(new Option('--page-size <n>', 'items per page, at most 500').default(50).argParser(positiveInt('--page-size'))),
  ).action(async (opts: JsonOption & { partner: string; status: RejectedStatusFilter; page: number; pageSize: number }) => {
    const page = await withRuntime(io, (rt) => listRejectedInbound(rt, PLATFORM_ACCESS, { partnerCode: opts.partner, status: opts.status, page: opts.page, pageSize: opts.pageSize }));
    printResult(io, opts, page, () => {
      if (page.total === 0) return `No rejected items for ${page.partner}${page.status === 'all' ? '' : ` (${page.status})`}.`;
      const shown = page.items.map(describeRejected).join('\n');
      const more = page.page * page.pageSize < page.total ? `\n(page ${page.page}; ${page.total} in all: --page ${page.page + 1} for more)` : '';
      return `${shown}${more}`;
    });
  });

  jsonOption(
    inbound
      .command('dismiss')
      .description('mark a rejected item as looked at (it leaves --status open and the counts)')
      .argument('<itemId>', 'rejected item id')
      .option('--reason <text>', 'why it is dismissed (kept on the item and in the audit log)'),
  ).action(
    async (id: string, opts: JsonOption & { reason?: string }) => {
      const item = await withRuntime(io, (rt) => dismissRejectedItem(rt, cliActorOf(rt), id, opts.reason));
      printResult(io, opts, item, () => `Dismissed ${describeRejected(item)}`);
    },
  );

  jsonOption(inbound.command('retry').description('submit a rejected item to intake again (after its cause was fixed)').argument('<itemId>', 'rejected item id')).action(
    async (id: string, opts: JsonOption) => {
      const r = await withRuntime(io, (rt) => retryRejectedItem(rt, cliActorOf(rt), id));
      printResult(io, opts, r, () => `${r.accepted ? 'Accepted now' : 'Refused again'}: ${describeRejected(r.item)}`);
    },
  );
}
