import type { Command } from 'commander';
import { createTenant, listAllTenants, type TenantView } from '../services/tenants/index.js';
import { changeIntakePolicy } from '../services/tenants/index.js';
import { cliActor } from '../services/audit/index.js';
import { jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

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
    const t = await withRuntime(io, (rt) => createTenant(rt, { name: opts.name, ibgeCode: opts.ibge ?? null, intakePolicy: opts.intake }));
    printResult(io, opts, t, () => `Created tenant ${describe(t)}`);
  });

  jsonOption(tenant.command('list').description('list tenants')).action(async (opts: JsonOption) => {
    const tenants = await withRuntime(io, (rt) => listAllTenants(rt));
    printResult(io, opts, { tenants }, () => (tenants.length ? tenants.map(describe).join('\n') : 'No tenants yet.'));
  });

  jsonOption(
    tenant
      .command('set-intake')
      .description('set the intake policy of a tenant')
      .argument('<id>', 'tenant id')
      .argument('<policy>', 'automatic or manual'),
  ).action(async (id: string, policy: string, opts: JsonOption) => {
    const t = await withRuntime(io, (rt) => changeIntakePolicy(rt, cliActor(), id, policy));
    printResult(io, opts, t, () => `Tenant ${t.id} intake is now ${t.intakePolicy}`);
  });
}
