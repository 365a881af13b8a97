import type { Command } from 'commander';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import type { ServiceOrder } from '../../generated/admin/types.gen.js';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, getServiceOrder, startServiceOrder } from '../services/operations/index.js';
import { jsonOption, printResult, cliActorOf, withRuntime, type CliIo, type JsonOption } from './context.js';

export function describeOrder(o: ServiceOrder): string {
  const team = o.team ? `team=${o.team.name}` : 'no team';
  const where = `${o.address}${o.neighborhood ? ` - ${o.neighborhood}` : ''}`;
  const location = o.latitude === null ? 'NOT GEOLOCATED' : `${o.latitude},${o.longitude}`;
  return `${o.number} ${o.status}  ${o.type} ${o.priority}  ${where}  ${location}  ${team}${o.closedAt ? `  closed ${o.closedAt}` : ''}  id=${o.id}`;
}

export function registerOrderCommands(program: Command, io: CliIo): void {
  const order = program.command('order').description('service orders: OPEN -> ASSIGNED -> IN_PROGRESS -> COMPLETED, or CANCELLED');

  jsonOption(order.command('show').description('show one service order (2.3 shape); its alerts: lumen alert list --order ID').argument('<id>', 'service order id')).action(
    async (id: string, opts: JsonOption) => {
      const o = await withRuntime(io, (rt) => getServiceOrder(rt, PLATFORM_ACCESS, id));
      printResult(io, opts, o, () => describeOrder(o));
    },
  );

  jsonOption(
    order
      .command('assign')
      .description('OPEN or ASSIGNED -> ASSIGNED to a team; partners get ServiceOrder.StatusChanged')
      .argument('<orderId>', 'service order id')
      .requiredOption('--team <teamId>', "a team of the order's tenant")
      .option('--note <text>', 'kept in the status history and the audit log'),
  ).action(async (orderId: string, opts: JsonOption & { team: string; note?: string }) => {
    const o = await withRuntime(io, (rt) => assignServiceOrder(rt, cliActorOf(rt), orderId, opts.team, opts.note));
    printResult(io, opts, o, () => describeOrder(o));
  });

  jsonOption(
    order
      .command('start')
      .description('ASSIGNED -> IN_PROGRESS; partners get ServiceOrder.StatusChanged')
      .argument('<orderId>', 'service order id')
      .option('--note <text>', 'kept in the status history and the audit log'),
  ).action(async (orderId: string, opts: JsonOption & { note?: string }) => {
    const o = await withRuntime(io, (rt) => startServiceOrder(rt, cliActorOf(rt), orderId, opts.note));
    printResult(io, opts, o, () => describeOrder(o));
  });

  jsonOption(
    order
      .command('complete')
      .description('ASSIGNED or IN_PROGRESS -> COMPLETED; linked alerts become Resolved; partners get ServiceOrder.Completed')
      .argument('<orderId>', 'service order id')
      .option('--note <text>', 'kept in the status history and the audit log'),
  ).action(async (orderId: string, opts: JsonOption & { note?: string }) => {
    const o = await withRuntime(io, (rt) => completeServiceOrder(rt, cliActorOf(rt), orderId, opts.note));
    printResult(io, opts, o, () => describeOrder(o));
  });

  jsonOption(
    order
      .command('cancel')
      .description('OPEN, ASSIGNED or IN_PROGRESS -> CANCELLED; linked alerts go back to Pending; partners get ServiceOrder.Cancelled')
      .argument('<orderId>', 'service order id')
      .option('--reason <text>', 'why (kept in the status history and the audit log)'),
  ).action(async (orderId: string, opts: JsonOption & { reason?: string }) => {
    const o = await withRuntime(io, (rt) => cancelServiceOrder(rt, cliActorOf(rt), orderId, opts.reason));
    printResult(io, opts, o, () => describeOrder(o));
  });
}
