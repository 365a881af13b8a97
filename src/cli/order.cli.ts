import type { Command } from 'commander';
import type { ServiceOrder, Timeline } from '../../generated/admin/types.gen.js';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import { orderTimeline, setOrderPole, listServiceOrders, assignServiceOrder, cancelServiceOrder, completeServiceOrder, getServiceOrder, startServiceOrder } from '../services/operations/index.js';
import { CliError, jsonOption, printResult, cliActorOf, withRuntime, type CliIo, type JsonOption } from './context.js';
import { TENANT_HINT, orderIdOf, orderRefOf, teamIdOf } from './refs.js';

export function describeOrder(o: ServiceOrder): string {
  const team = o.team ? `team=${o.team.name}` : 'no team';
  const where = `${o.address}${o.neighborhood ? ` - ${o.neighborhood}` : ''}`;
  const location = o.latitude === null ? 'NOT GEOLOCATED' : `${o.latitude},${o.longitude}`;
  return `${o.number} ${o.status}  ${o.type} ${o.priority}  ${where}  ${location}  ${team}${o.closedAt ? `  closed ${o.closedAt}` : ''}  id=${o.id}`;
}

/** One line per timeline entry, oldest first. */
export function describeTimeline(tl: Timeline): string {
  return tl.items.map((e) => `${e.at}  ${e.kind.padEnd(8)} ${e.title}${e.actor ? `  by ${e.actor}` : ''}${e.note ? `  (${e.note})` : ''}`).join('\n') || 'Nothing yet.';
}

export function registerOrderCommands(program: Command, io: CliIo): void {
  const order = program.command('order').description('service orders: OPEN -> ASSIGNED -> IN_PROGRESS -> COMPLETED, or CANCELLED');

  jsonOption(
    order
      .command('list')
      .description('list service orders, newest first (or by deadline or priority), one page at a time')
      .option('--tenant <id>', 'only this tenant (default: every tenant)')
      .option('--status <list>', 'one status or several, comma-separated (OPEN,ASSIGNED,IN_PROGRESS = open)')
      .option('--team <team>', 'only orders of this team (id or name)')
      .option('--overdue', 'only open orders past their SLA deadline')
      .option('--reason <code>', 'only orders of this internal reason')
      .option('--partner <code>', 'only orders with an alert of this partner')
      .option('--text <text>', 'words found (accent- and case-insensitive) in number, address or neighborhood; or a pole code')
      .option('--sort <sort>', 'opened (newest first), sla (earliest deadline) or priority', 'opened')
      .option('--cursor <cursor>', 'continue after the page that printed it')
      .option('--limit <n>', 'orders per page (at most 500)', '50'),
  ).action(async (opts: JsonOption & { tenant?: string; status?: string; team?: string; overdue?: boolean; reason?: string; partner?: string; text?: string; sort: string; cursor?: string; limit: string }) => {
    const page = await withRuntime(io, (rt) =>
      listServiceOrders(rt, PLATFORM_ACCESS, { tenantId: opts.tenant, status: opts.status, team: opts.team, overdue: opts.overdue ?? false, reason: opts.reason, partner: opts.partner, text: opts.text, sort: opts.sort, cursor: opts.cursor, limit: opts.limit }),
    );
    printResult(io, opts, page, () =>
      page.items.length === 0
        ? 'No service orders match.'
        : [...page.items.map((o) => `${describeOrder(o)}${o.overdue ? '  OVERDUE' : ''}  alerts=${o.alertCount}`), `(${page.items.length} of ${page.total})${page.nextCursor ? `  next: --cursor ${page.nextCursor}` : ''}`].join('\n'),
    );
  });

  jsonOption(order.command('timeline').description("an order's story: status changes, audit entries, events and deliveries").argument('<id>', 'service order id or number (OS-2026-00042)').option(...TENANT_HINT)).action(
    async (id: string, opts: JsonOption & { tenant?: string }) => {
      const tl = await withRuntime(io, async (rt) => orderTimeline(rt.db, PLATFORM_ACCESS, await orderRefOf(rt, id, opts.tenant)));
      printResult(io, opts, tl, () => describeTimeline(tl));
    },
  );

  jsonOption(
    order
      .command('set-pole')
      .description("set an open order's pole (no event; audited)")
      .argument('<orderId>', 'service order id or number (OS-2026-00042)')
      .option(...TENANT_HINT)
      .option('--pole <pole>', 'pole id or code')
      .option('--clear', "clear the order's pole"),
  ).action(async (orderId: string, opts: JsonOption & { tenant?: string; pole?: string; clear?: boolean }) => {
    if ((opts.pole === undefined) === !opts.clear) throw new CliError('give exactly one of --pole or --clear');
    const o = await withRuntime(io, async (rt) => setOrderPole(rt, cliActorOf(rt), await orderRefOf(rt, orderId, opts.tenant), opts.clear ? null : opts.pole!));
    printResult(io, opts, o, () => `${describeOrder(o)}  pole=${o.poleId ?? 'none'}`);
  });

  jsonOption(order.command('show').description('show one service order (2.3 shape); its alerts: lumen alert list --order ID').argument('<id>', 'service order id or number (OS-2026-00042)').option(...TENANT_HINT)).action(
    async (id: string, opts: JsonOption & { tenant?: string }) => {
      const o = await withRuntime(io, async (rt) => getServiceOrder(rt, PLATFORM_ACCESS, await orderIdOf(rt, id, opts.tenant)));
      printResult(io, opts, o, () => describeOrder(o));
    },
  );

  jsonOption(
    order
      .command('assign')
      .description('OPEN or ASSIGNED -> ASSIGNED to a team; partners get ServiceOrder.StatusChanged')
      .argument('<orderId>', 'service order id or number (OS-2026-00042)')
      .option(...TENANT_HINT)
      .requiredOption('--team <teamId>', "a team of the order's tenant: id or name")
      .option('--note <text>', 'kept in the status history and the audit log'),
  ).action(async (orderId: string, opts: JsonOption & { tenant?: string; team: string; note?: string }) => {
    const o = await withRuntime(io, async (rt) => {
      const ref = await orderRefOf(rt, orderId, opts.tenant);
      return assignServiceOrder(rt, cliActorOf(rt), ref.id, await teamIdOf(rt, opts.team, ref.tenantId, 'order'), opts.note);
    });
    printResult(io, opts, o, () => describeOrder(o));
  });

  jsonOption(
    order
      .command('start')
      .description('ASSIGNED -> IN_PROGRESS; partners get ServiceOrder.StatusChanged')
      .argument('<orderId>', 'service order id or number (OS-2026-00042)')
      .option(...TENANT_HINT)
      .option('--note <text>', 'kept in the status history and the audit log'),
  ).action(async (orderId: string, opts: JsonOption & { tenant?: string; note?: string }) => {
    const o = await withRuntime(io, async (rt) => startServiceOrder(rt, cliActorOf(rt), await orderIdOf(rt, orderId, opts.tenant), opts.note));
    printResult(io, opts, o, () => describeOrder(o));
  });

  jsonOption(
    order
      .command('complete')
      .description('ASSIGNED or IN_PROGRESS -> COMPLETED; linked alerts become Resolved; partners get ServiceOrder.Completed')
      .argument('<orderId>', 'service order id or number (OS-2026-00042)')
      .option(...TENANT_HINT)
      .option('--note <text>', 'kept in the status history and the audit log'),
  ).action(async (orderId: string, opts: JsonOption & { tenant?: string; note?: string }) => {
    const o = await withRuntime(io, async (rt) => completeServiceOrder(rt, cliActorOf(rt), await orderIdOf(rt, orderId, opts.tenant), opts.note));
    printResult(io, opts, o, () => describeOrder(o));
  });

  jsonOption(
    order
      .command('cancel')
      .description('OPEN, ASSIGNED or IN_PROGRESS -> CANCELLED; linked alerts go back to Pending; partners get ServiceOrder.Cancelled')
      .argument('<orderId>', 'service order id or number (OS-2026-00042)')
      .option(...TENANT_HINT)
      .option('--reason <text>', 'why (kept in the status history and the audit log)'),
  ).action(async (orderId: string, opts: JsonOption & { tenant?: string; reason?: string }) => {
    const o = await withRuntime(io, async (rt) => cancelServiceOrder(rt, cliActorOf(rt), await orderIdOf(rt, orderId, opts.tenant), opts.reason));
    printResult(io, opts, o, () => describeOrder(o));
  });
}
