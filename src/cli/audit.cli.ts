import { PLATFORM_ACCESS } from '../services/operators/index.js';
import type { Command } from 'commander';
import { listAuditEntries, type AuditEntryView } from '../services/audit/index.js';
import { jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

const describe = (e: AuditEntryView): string =>
  `${e.at}  ${e.actor}  ${e.action}  ${e.entityType} ${e.entityId}  ${JSON.stringify(e.before)} -> ${JSON.stringify(e.after)}${e.note ? `  "${e.note}"` : ''}`;

export function registerAuditCommands(program: Command, io: CliIo): void {
  const audit = program.command('audit').description('the audit log of operator actions');

  jsonOption(
    audit
      .command('list')
      .description('audit entries, oldest first')
      .option('--tenant <id>', 'only this tenant')
      .option('--since <timestamp>', 'only entries at or after this ISO 8601 instant')
      .option('--entity-type <type>', 'tenant, team, alert, service_order, partner or admin_token')
      .option('--entity-id <id>', 'only entries about this entity')
      .option('--after <id>', 'only entries after this id (the previous page\'s nextAfter)')
      .option('--limit <n>', 'entries per page (at most 1000)', '100'),
  ).action(async (opts: JsonOption & { tenant?: string; since?: string; entityType?: string; entityId?: string; after?: string; limit: string }) => {
    const page = await withRuntime(io, (rt) =>
      listAuditEntries(rt, PLATFORM_ACCESS, { tenantId: opts.tenant, since: opts.since, entityType: opts.entityType, entityId: opts.entityId, after: opts.after, limit: opts.limit }),
    );
    printResult(io, opts, page, () =>
      page.items.length === 0 ? 'No audit entries match.' : [...page.items.map(describe), ...(page.nextAfter !== null ? [`(more: --after ${page.nextAfter})`] : [])].join('\n'),
    );
  });
}
