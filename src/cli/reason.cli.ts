import type { Command } from 'commander';
import { applyReasonMapping, createReason, listReasons, mapReason, partnerReasonCodes, unmapReason, type ReasonMappingView, type ReasonView } from '../services/operations/index.js';
import { jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

const describeReason = (r: ReasonView): string => `${r.code}  ${r.priority}  sla=${r.slaHours}h  pt="${r.namePt}"  en="${r.nameEn}"`;
const describeMapping = (m: ReasonMappingView): string => `${m.partner}: ${m.partnerCode} -> ${m.reasonCode}`;

export function registerReasonCommands(program: Command, io: CliIo): void {
  const reason = program.command('reason').description("internal reasons of a tenant and partners' reason-code mappings");

  jsonOption(
    reason
      .command('create')
      .description('add an internal reason to a tenant (its priority and SLA apply to orders created from it)')
      .requiredOption('--tenant <id>', 'tenant id')
      .requiredOption('--code <code>', 'internal code, e.g. LAMP_OUT')
      .requiredOption('--name-pt <name>', 'name in Portuguese (pt-BR)')
      .requiredOption('--name-en <name>', 'name in English')
      .requiredOption('--priority <priority>', 'Low, Medium, High or Critical')
      .requiredOption('--sla-hours <hours>', 'hours to solve, 1..8760'),
  ).action(async (opts: JsonOption & { tenant: string; code: string; namePt: string; nameEn: string; priority: string; slaHours: string }) => {
    const r = await withRuntime(io, (rt) =>
      createReason(rt, { tenantId: opts.tenant, code: opts.code, namePt: opts.namePt, nameEn: opts.nameEn, priority: opts.priority, slaHours: opts.slaHours }),
    );
    printResult(io, opts, r, () => `Created reason ${describeReason(r)}`);
  });

  jsonOption(
    reason
      .command('map')
      .description("map a partner's reason code to an internal reason (replaces an earlier mapping of that code)")
      .requiredOption('--partner <code>', 'partner (external system) code')
      .requiredOption('--from <partnerCode>', "the partner's reason code, as sent in reasonCode")
      .requiredOption('--to <code>', "internal reason code of the partner's tenant"),
  ).action(async (opts: JsonOption & { partner: string; from: string; to: string }) => {
    const m = await withRuntime(io, (rt) => mapReason(rt, { partnerCode: opts.partner, from: opts.from, to: opts.to }));
    printResult(io, opts, m, () => `Mapped ${describeMapping(m)}`);
  });

  jsonOption(
    reason
      .command('unmap')
      .description('remove a mapping: that partner code falls back to EXTERNAL_OTHER')
      .requiredOption('--partner <code>', 'partner (external system) code')
      .requiredOption('--from <partnerCode>', "the partner's reason code"),
  ).action(async (opts: JsonOption & { partner: string; from: string }) => {
    const r = await withRuntime(io, (rt) => unmapReason(rt, { partnerCode: opts.partner, from: opts.from }));
    printResult(io, opts, r, () => (r.removed ? `Removed the mapping of ${r.partner}: ${r.partnerCode}` : `${r.partner} had no mapping for ${r.partnerCode}`));
  });

  jsonOption(
    reason
      .command('codes')
      .description("a partner's reason codes: mapped ones, and those seen in its alerts but unmapped, with counts")
      .requiredOption('--partner <code>', 'partner (external system) code'),
  ).action(async (opts: JsonOption & { partner: string }) => {
    const out = await withRuntime(io, (rt) => partnerReasonCodes(rt, opts.partner));
    printResult(io, opts, out, () =>
      out.items.length === 0
        ? `${out.partner} has sent no reason codes and has no mappings.`
        : out.items.map((c) => `${c.partnerCode} -> ${c.reasonCode ?? 'UNMAPPED (EXTERNAL_OTHER)'}  alerts=${c.alerts} pending=${c.pendingAlerts}${c.lastSeenAt ? ` last=${c.lastSeenAt}` : ''}`).join('\n'),
    );
  });

  jsonOption(
    reason
      .command('apply')
      .description('reclassify the Pending alerts that carry a mapped partner code to the reason it maps to now')
      .requiredOption('--partner <code>', 'partner (external system) code')
      .requiredOption('--from <partnerCode>', "the partner's reason code (it must have a mapping)"),
  ).action(async (opts: JsonOption & { partner: string; from: string }) => {
    const r = await withRuntime(io, (rt) => applyReasonMapping(rt, opts.partner, opts.from));
    printResult(io, opts, r, () => `Reclassified ${r.reclassified} Pending alert(s) of ${r.partner} from ${r.partnerCode} to ${r.reasonCode}${r.alertNumbers.length ? `: ${r.alertNumbers.map((n) => `#${n}`).join(' ')}` : ''}`);
  });

  jsonOption(reason.command('list').description("list a tenant's reasons and its partners' mappings").requiredOption('--tenant <id>', 'tenant id')).action(
    async (opts: JsonOption & { tenant: string }) => {
      const out = await withRuntime(io, (rt) => listReasons(rt, opts.tenant));
      printResult(io, opts, out, () =>
        [
          'Reasons:',
          ...out.reasons.map((r) => `  ${describeReason(r)}`),
          'Mappings:',
          ...(out.mappings.length ? out.mappings.map((m) => `  ${describeMapping(m)}`) : ['  (none: every partner code maps to EXTERNAL_OTHER)']),
        ].join('\n'),
      );
    },
  );
}
