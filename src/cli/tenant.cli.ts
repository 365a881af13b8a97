import type { Command } from 'commander';
import { setLampOutPolicy, type LampOutPolicyInput } from '../services/telemetry-alerts/index.js';
import { createTenantAs, listAllTenants, type TenantView } from '../services/tenants/index.js';
import { changeIntakePolicy } from '../services/tenants/index.js';
import { tenantAttention } from '../services/operations/index.js';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import { jsonOption, printResult, cliActorOf, withRuntime, type CliIo, type JsonOption } from './context.js';

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
