import type { Command } from 'commander';
import type { Alert, ServiceOrder } from '../../generated/admin/types.gen.js';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import { alertTimeline, duplicateSuggestions, createOrderFromAlert, discardAlert, getAlert, linkAlert, listAlerts, reclassifyAlert, setAlertLocation } from '../services/operations/index.js';
import { CliError, jsonOption, printResult, cliActorOf, withRuntime, type CliIo, type JsonOption } from './context.js';
import { describeOrder, describeTimeline } from './order.cli.js';
import { alertIdOf, alertRefOf, linkOrderIdOf, teamIdOf, TENANT_HINT } from './refs.js';

/** One line per alert: what an operator scans in the triage inbox. */
export function describeAlert(a: Alert): string {
  const where = [a.address.street, a.address.number].filter(Boolean).join(', ') + (a.address.neighborhood ? ` - ${a.address.neighborhood}` : '');
  const location = a.geolocated ? `${a.latitude},${a.longitude} (${a.locationSource})` : 'NOT GEOLOCATED';
  const order = a.serviceOrder ? `  order=${a.serviceOrder.number} ${a.serviceOrder.status}` : '';
  return `#${a.alertNumber} ${a.status}  ${a.reasonCode} ${a.priority} due ${a.slaDueAt}  ${where}  ${location}  partner=${a.partner.code} protocol=${a.protocolNumber}${order}  id=${a.id}`;
}

function coordinate(name: string, raw: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n)) throw new CliError(`${name} must be a number (got "${raw}")`);
  return n;
}

export function registerAlertCommands(program: Command, io: CliIo): void {
  const alert = program.command('alert').description('alerts: triage of partner requests');

  jsonOption(
    alert
      .command('list')
      .description("list a tenant's alerts, oldest first (Pending = the triage inbox)")
      .requiredOption('--tenant <id>', 'tenant id')
      .option('--status <status>', 'Pending, Linked, Resolved or Cancelled')
      .option('--not-geolocated', 'only alerts without coordinates')
      .option('--order <id>', 'only alerts linked to this service order')
      .option('--partner <code>', 'only alerts of this partner')
      .option('--reason <code>', 'only alerts of this internal reason')
      .option('--partner-reason <code>', "only alerts whose partner sent this reason code (the partner's own code)")
      .option('--overdue', 'only Pending or Linked alerts past their SLA deadline')
      .option('--text <text>', 'words found (accent- and case-insensitive) in what the inbox row shows: number, protocol, address, citizen, phone, description; or a pole code')
      .option('--sort <sort>', 'number (oldest first), age, priority or newest', 'number')
      .option('--page <n>', 'page number, from 1', '1')
      .option('--page-size <n>', 'alerts per page (at most 500)', '50'),
  ).action(async (opts: JsonOption & { tenant: string; status?: string; notGeolocated?: boolean; order?: string; partner?: string; reason?: string; partnerReason?: string; overdue?: boolean; text?: string; sort: string; page: string; pageSize: string }) => {
    const page = await withRuntime(io, (rt) =>
      listAlerts(rt, PLATFORM_ACCESS, { tenantId: opts.tenant, status: opts.status, notGeolocated: opts.notGeolocated ?? false, serviceOrderId: opts.order, partner: opts.partner, reason: opts.reason, partnerReason: opts.partnerReason, overdue: opts.overdue ?? false, text: opts.text, sort: opts.sort, page: opts.page, pageSize: opts.pageSize }, 'en'),
    );
    printResult(io, opts, page, () =>
      page.items.length === 0 ? 'No alerts match.' : [...page.items.map(describeAlert), `(page ${page.page}, ${page.items.length} of ${page.total})`].join('\n'),
    );
  });

  jsonOption(alert.command('show').description('show one alert').argument('<id>', 'alert id or number (42, #42)').option(...TENANT_HINT)).action(async (id: string, opts: JsonOption & { tenant?: string }) => {
    const a = await withRuntime(io, async (rt) => getAlert(rt, PLATFORM_ACCESS, await alertIdOf(rt, id, opts.tenant), 'en'));
    printResult(io, opts, a, () =>
      [
        describeAlert(a),
        `  requester: ${a.requesterName}${a.requesterPhone ? ` ${a.requesterPhone}` : ''}`,
        `  problem:   ${a.description}${a.additionalNotes ? ` (${a.additionalNotes})` : ''}`,
        `  reason:    ${a.reasonCode} - ${a.reasonName}${a.partnerReasonCode ? ` (partner code ${a.partnerReasonCode})` : ''}`,
        ...(a.address.reference ? [`  reference: ${a.address.reference}`] : []),
        ...(a.cancelReason ? [`  discarded: ${a.cancelReason}`] : []),
      ].join('\n'),
    );
  });

  jsonOption(alert.command('timeline').description("an alert's story: status changes, audit entries, events and deliveries").argument('<id>', 'alert id or number (42, #42)').option(...TENANT_HINT)).action(
    async (id: string, opts: JsonOption & { tenant?: string }) => {
      const tl = await withRuntime(io, async (rt) => alertTimeline(rt.db, PLATFORM_ACCESS, await alertRefOf(rt, id, opts.tenant)));
      printResult(io, opts, tl, () => describeTimeline(tl));
    },
  );

  jsonOption(alert.command('duplicates').description('open orders on the same pole or within 50 m: candidates for lumen alert link').argument('<id>', 'alert id or number (42, #42)').option(...TENANT_HINT)).action(
    async (id: string, opts: JsonOption & { tenant?: string }) => {
      const d = await withRuntime(io, async (rt) => duplicateSuggestions(rt, PLATFORM_ACCESS, await alertRefOf(rt, id, opts.tenant)));
      printResult(io, opts, d, () =>
        d.items.length === 0
          ? 'No open order on the same pole or within 50 m.'
          : d.items.map((s) => `${s.serviceOrder.number} ${s.serviceOrder.status}  ${s.samePole ? 'same pole' : `${s.distanceMeters} m`}  ${s.serviceOrder.address}`).join('\n'),
      );
    },
  );

  jsonOption(
    alert
      .command('create-order')
      .description('Pending -> Linked with a new service order; the partner gets ServiceOrder.Created (--json prints the order)')
      .argument('<alertId>', 'alert id or number (42, #42)')
      .option(...TENANT_HINT)
      .option('--team <teamId>', 'assign the new order to this team, by id or name (it starts ASSIGNED)')
      .option('--reason <code>', 'reclassify the alert with this internal reason first')
      .option('--pole <pole>', "the order's pole, by id or code (default: the nearest within LUMEN_POLE_MATCH_METERS)"),
  ).action(async (alertId: string, opts: JsonOption & { tenant?: string; team?: string; reason?: string; pole?: string }) => {
    const order: ServiceOrder = await withRuntime(io, async (rt) => {
      const ref = await alertRefOf(rt, alertId, opts.tenant);
      const teamId = opts.team === undefined ? undefined : await teamIdOf(rt, opts.team, ref.tenantId, 'alert');
      return createOrderFromAlert(rt, cliActorOf(rt), ref.id, { teamId, reasonCode: opts.reason, poleId: opts.pole });
    });
    printResult(io, opts, order, () => `Created ${describeOrder(order)}`);
  });

  jsonOption(
    alert
      .command('link')
      .description('Pending -> Linked to an existing open order (a duplicate report); the partner gets ServiceOrder.Created')
      .argument('<alertId>', 'alert id or number (42, #42)')
      .option(...TENANT_HINT)
      .requiredOption('--order <orderId>', 'service order id or number (OPEN, ASSIGNED or IN_PROGRESS)'),
  ).action(async (alertId: string, opts: JsonOption & { tenant?: string; order: string }) => {
    const a = await withRuntime(io, async (rt) => {
      const ref = await alertRefOf(rt, alertId, opts.tenant);
      return linkAlert(rt, cliActorOf(rt), ref.id, await linkOrderIdOf(rt, opts.order, ref.tenantId), 'en');
    });
    printResult(io, opts, a, () => `Linked ${describeAlert(a)}`);
  });

  jsonOption(
    alert
      .command('discard')
      .description('Pending -> Cancelled; the partner gets Alert.Cancelled')
      .argument('<alertId>', 'alert id or number (42, #42)')
      .option(...TENANT_HINT)
      .option('--reason <text>', 'why (kept on the alert and in the audit log)'),
  ).action(async (alertId: string, opts: JsonOption & { tenant?: string; reason?: string }) => {
    const a = await withRuntime(io, async (rt) => discardAlert(rt, cliActorOf(rt), await alertIdOf(rt, alertId, opts.tenant), opts.reason, 'en'));
    printResult(io, opts, a, () => `Discarded ${describeAlert(a)}`);
  });

  jsonOption(
    alert
      .command('reclassify')
      .description('set the internal reason; priority and SLA follow (Pending, or Linked to an open order: the order follows too)')
      .argument('<alertId>', 'alert id or number (42, #42)')
      .option(...TENANT_HINT)
      .requiredOption('--reason <code>', 'internal reason code of the tenant'),
  ).action(async (alertId: string, opts: JsonOption & { tenant?: string; reason: string }) => {
    const a = await withRuntime(io, async (rt) => reclassifyAlert(rt, cliActorOf(rt), await alertIdOf(rt, alertId, opts.tenant), opts.reason, 'en'));
    printResult(io, opts, a, () => `Reclassified ${describeAlert(a)}`);
  });

  jsonOption(
    alert
      .command('set-location')
      .description('set WGS-84 coordinates (clears "not geolocated"); an open linked order without coordinates takes them')
      .argument('<alertId>', 'alert id or number (42, #42)')
      .option(...TENANT_HINT)
      .requiredOption('--lat <latitude>', 'latitude, -90..90')
      .requiredOption('--lon <longitude>', 'longitude, -180..180')
      .option('--confirm-outside', 'save a point outside the city or far from every pole (refused without it, saying how far)'),
  ).action(async (alertId: string, opts: JsonOption & { tenant?: string; lat: string; lon: string; confirmOutside?: boolean }) => {
    const lat = coordinate('--lat', opts.lat);
    const lon = coordinate('--lon', opts.lon);
    const a = await withRuntime(io, async (rt) => setAlertLocation(rt, cliActorOf(rt), await alertIdOf(rt, alertId, opts.tenant), lat, lon, 'en', opts.confirmOutside === true));
    printResult(io, opts, a, () => `Located ${describeAlert(a)}`);
  });
}
