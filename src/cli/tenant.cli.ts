import type { Command } from 'commander';
import { setLampOutPolicy, type LampOutPolicyInput } from '../services/telemetry-alerts/index.js';
import { createTenantAs, listAllTenants, type TenantView } from '../services/tenants/index.js';
import { changeIntakePolicy } from '../services/tenants/index.js';
import { tenantAttention } from '../services/operations/index.js';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import { setTenantExtent, type Extent } from '../services/city-extent/index.js';
import { tenantView } from '../services/tenants/index.js';
import { CliError, jsonOption, printResult, cliActorOf, withRuntime, type CliIo, type JsonOption } from './context.js';

const describe = (t: TenantView): string => `${t.id}  ${t.name}  ibge=${t.ibgeCode ?? '-'}  intake=${t.intakePolicy}`;

export function registerTenantCommands(program: Command, io: CliIo): void {
  const tenant = program.command('tenant').description('tenants: municipalities or operating contracts');

  jsonOption(
    tenant
      .command('create')
      .description('create a tenant')
      .requiredOption('--name <name>', 'tenant name')
      .option('--ibge <code>', 'municipality IBGE code, 7 digits')
      .option('--intake <policy>', 'intake policy: automatic or manual', 'automatic'),
  ).action(async (opts: JsonOption & { name: string; ibge?: string; intake: string }) => {
    const t = await withRuntime(io, (rt) => createTenantAs(rt, cliActorOf(rt), { name: opts.name, ibgeCode: opts.ibge ?? null, intakePolicy: opts.intake }));
    printResult(io, opts, t, () => `Created tenant ${describe(t)}`);
  });

  jsonOption(tenant.command('list').description('list tenants')).action(async (opts: JsonOption) => {
    const tenants = await withRuntime(io, (rt) => listAllTenants(rt));
    printResult(io, opts, { tenants }, () => (tenants.length ? tenants.map(describe).join('\n') : 'No tenants yet.'));
  });

  jsonOption(tenant.command('attention').description('what waits for an operator in a tenant (the console badges)').argument('<id>', 'tenant id')).action(async (id: string, opts: JsonOption) => {
    const a = await withRuntime(io, (rt) => tenantAttention(rt, PLATFORM_ACCESS, id));
    printResult(io, opts, a, () =>
      [
        `Pending alerts:          ${a.pendingAlerts} (${a.overduePendingAlerts} overdue)`,
        `Not geolocated alerts:   ${a.notGeolocatedAlerts}`,
        `Overdue service orders:  ${a.overdueServiceOrders}`,
        `Dead webhook deliveries: ${a.deadDeliveries}`,
        `Rejected inbound items:  ${a.rejectedInboundItems}`,
        `Failed attachment URLs:  ${a.failedAttachmentUrls}`,
      ].join('\n'),
    );
  });

  jsonOption(
    tenant
      .command('update')
      .description("set where the city is (the box its maps open on, checked when a location is set) and the location check distance")
      .argument('<id>', 'tenant id')
      .option('--extent <box>', 'south,west,north,east in decimal degrees (for example -3.19,-60.13,-2.92,-59.81), or none to use the box of the poles again')
      .option('--location-check-meters <m>', 'a location farther than this from every pole needs a confirmation (10..100000, default 200)'),
  ).action(async (id: string, opts: JsonOption & { extent?: string; locationCheckMeters?: string }) => {
    if (opts.extent === undefined && opts.locationCheckMeters === undefined) throw new CliError('give --extent, --location-check-meters or both', 2);
    let extent: Extent | null | undefined;
    if (opts.extent !== undefined) {
      if (opts.extent.trim().toLowerCase() === 'none') extent = null;
      else {
        const parts = opts.extent.split(',').map((p) => p.trim());
        if (parts.length !== 4 || parts.some((p) => !/^-?[0-9]+(\.[0-9]+)?$/.test(p))) throw new CliError(`--extent: "${opts.extent}" is not south,west,north,east in decimal degrees (for example -3.19,-60.13,-2.92,-59.81)`, 2);
        const [south, west, north, east] = parts.map(Number) as [number, number, number, number];
        extent = { south, west, north, east };
      }
    }
    const meters = opts.locationCheckMeters === undefined ? undefined : /^[0-9]+$/.test(opts.locationCheckMeters.trim()) ? Number(opts.locationCheckMeters) : NaN;
    const t = tenantView(await withRuntime(io, (rt) => setTenantExtent(rt, cliActorOf(rt), id, { ...(extent !== undefined ? { extent } : {}), ...(meters !== undefined ? { locationCheckMeters: meters } : {}) })));
    printResult(io, opts, t, () =>
      [
        `Tenant ${t.id} (${t.name})`,
        t.extent ? `Extent (${t.extentSource === 'configured' ? 'configured' : 'from its poles'}): south ${t.extent.south}, west ${t.extent.west}, north ${t.extent.north}, east ${t.extent.east}` : 'No extent: no box configured and no poles yet.',
        `A location farther than ${t.locationCheckMeters} m from every pole needs a confirmation.`,
      ].join('\n'),
    );
  });

  jsonOption(
    tenant
      .command('set-intake')
      .description('set the intake policy of a tenant')
      .argument('<id>', 'tenant id')
      .argument('<policy>', 'automatic or manual'),
  ).action(async (id: string, policy: string, opts: JsonOption) => {
    const t = await withRuntime(io, (rt) => changeIntakePolicy(rt, cliActorOf(rt), id, policy));
    printResult(io, opts, t, () => `Tenant ${t.id} intake is now ${t.intakePolicy}`);
  });

  jsonOption(
    tenant
      .command('lamp-out')
      .description('telemetry alerts: a lamp reported out (relay off at night, or the device offline) longer than --after minutes becomes a TELEMETRY_LAMP_OUT alert')
      .argument('<id>', 'tenant id')
      .option('--after <minutes|off>', 'minutes a lamp may be out before an alert (1..10080), or off (the default of a new tenant)')
      .option('--night <HH:MM-HH:MM>', 'local night window in which a relay reported off means a dark street (default 18:00-06:00)')
      .option('--timezone <zone>', 'IANA time zone of the night window (default America/Sao_Paulo)'),
  ).action(async (id: string, opts: JsonOption & { after?: string; night?: string; timezone?: string }) => {
    const input: LampOutPolicyInput = {};
    if (opts.after !== undefined) input.afterMinutes = opts.after === 'off' ? null : /^\d+$/.test(opts.after) ? Number(opts.after) : Number.NaN;
    if (opts.night !== undefined) {
      const [starts, ends] = opts.night.split('-');
      input.nightStarts = starts ?? '';
      input.nightEnds = ends ?? '';
    }
    if (opts.timezone !== undefined) input.timezone = opts.timezone;
    const p = await withRuntime(io, (rt) => setLampOutPolicy(rt, cliActorOf(rt), id, input));
    printResult(io, opts, p, () =>
      p.afterMinutes === null
        ? `Tenant ${p.tenantId}: telemetry raises no lamp-out alerts (night ${p.nightStarts}-${p.nightEnds}, ${p.timezone})`
        : `Tenant ${p.tenantId}: a lamp out for more than ${p.afterMinutes} min becomes an alert (night ${p.nightStarts}-${p.nightEnds}, ${p.timezone})`,
    );
  });
}
