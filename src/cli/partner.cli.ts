import type { Command } from 'commander';
import { createPartner, getPartner, listPartners, rotatePartnerKey, setPartnerEnabled, type PartnerView } from '../services/partner.service.js';
import { jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

const describe = (p: PartnerView): string =>
  `${p.code}  tenant=${p.tenantId}  scopes=${p.scopes.join(',') || '-'}  transport=${p.transport}  ${p.enabled ? 'enabled' : 'DISABLED'}  key=${p.keyPrefix ?? '-'}…`;

const keyNotice = (apiKey: string): string =>
  `API key (shown once, store it now):\n  ${apiKey}\nTry it: curl -H "X-Api-Key: ${apiKey}" http://localhost:8080/api/external/health`;

export function registerPartnerCommands(program: Command, io: CliIo): void {
  const partner = program.command('partner').description('partner external systems and their API keys');

  jsonOption(
    partner
      .command('create')
      .description('register an external system and issue its API key')
      .requiredOption('--tenant <id>', 'tenant id')
      .requiredOption('--code <code>', 'unique partner code')
      .requiredOption('--scopes <list>', 'comma list: canCreateServiceOrders, canCreateAlerts, canReadCityData (PascalCase accepted)')
      .option('--transport <mode>', 'event transport: webhook or polling', 'webhook')
      .option('--webhook-url <url>', 'where events are posted (webhook mode)')
      .option('--webhook-secret <secret>', 'shared secret that signs webhooks (at least 16 characters)')
      .option('--polling-url <url>', "the partner's endpoint Lumen polls for new requests")
      .option('--polling-key <key>', 'key the partner issued to Lumen for its polling endpoint')
      .option('--polling-interval <seconds>', 'polling interval, 1..180 seconds', '180'),
  ).action(async (opts: JsonOption & Record<string, string | undefined>) => {
    const p = await withRuntime(io, (rt) =>
      createPartner(rt, {
        tenantId: opts.tenant!,
        code: opts.code!,
        scopes: opts.scopes!,
        transport: opts.transport,
        webhookUrl: opts.webhookUrl ?? null,
        webhookSecret: opts.webhookSecret ?? null,
        pollingUrl: opts.pollingUrl ?? null,
        pollingKey: opts.pollingKey ?? null,
        pollingIntervalSeconds: opts.pollingInterval,
      }),
    );
    printResult(io, opts, p, () => `Created partner ${describe(p)}\n${keyNotice(p.apiKey)}`);
  });

  jsonOption(partner.command('list').description('list partners').option('--tenant <id>', 'only this tenant')).action(async (opts: JsonOption & { tenant?: string }) => {
    const partners = await withRuntime(io, (rt) => listPartners(rt, opts.tenant));
    printResult(io, opts, { partners }, () => (partners.length ? partners.map(describe).join('\n') : 'No partners yet.'));
  });

  jsonOption(partner.command('show').description('show one partner').argument('<code>', 'partner code')).action(async (code: string, opts: JsonOption) => {
    const p = await withRuntime(io, (rt) => getPartner(rt, code));
    printResult(io, opts, p, () => describe(p));
  });

  jsonOption(partner.command('rotate-key').description('issue a new API key; the previous one stops working at once').argument('<code>', 'partner code')).action(
    async (code: string, opts: JsonOption) => {
      const p = await withRuntime(io, (rt) => rotatePartnerKey(rt, code));
      printResult(io, opts, p, () => `Rotated the key of ${p.code}; the previous key no longer works.\n${keyNotice(p.apiKey)}`);
    },
  );

  jsonOption(partner.command('disable').description('disable a partner: its key answers 403').argument('<code>', 'partner code')).action(async (code: string, opts: JsonOption) => {
    const p = await withRuntime(io, (rt) => setPartnerEnabled(rt, code, false));
    printResult(io, opts, p, () => `Disabled ${p.code}`);
  });

  jsonOption(partner.command('enable').description('enable a disabled partner').argument('<code>', 'partner code')).action(async (code: string, opts: JsonOption) => {
    const p = await withRuntime(io, (rt) => setPartnerEnabled(rt, code, true));
    printResult(io, opts, p, () => `Enabled ${p.code}`);
  });
}
