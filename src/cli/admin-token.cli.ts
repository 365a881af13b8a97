import type { Command } from 'commander';
import { createAdminToken, listAllAdminTokens, revokeAdminTokenById, type AdminTokenView } from '../services/operators/index.js';
import { CliError, cliActorOf, jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

const reach = (t: AdminTokenView): string =>
  t.scope === 'platform' ? 'every tenant' : t.scope === 'owner' ? "its operator's roles" : t.grants.map((g) => `${g.role}@${g.tenantId}`).join(', ');

const describe = (t: AdminTokenView): string =>
  `${t.id}  ${t.name}  ${t.keyPrefix}…  ${t.operator ? `operator=${t.operator.email}` : 'service'}  reach=${reach(t)}  created=${t.createdAt}${t.expiresAt ? `  expires=${t.expiresAt}` : ''}${t.revokedAt ? `  REVOKED ${t.revokedAt}` : ''}`;

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerAdminTokenCommands(program: Command, io: CliIo): void {
  const cmd = program.command('admin-token').description('tokens of the administrative API (/api/admin)');

  jsonOption(
    cmd
      .command('create')
      .description('issue an admin token (printed once); with no --operator or --tenant: a platform-wide service token')
      .requiredOption('--name <name>', 'who or what uses the token, e.g. "ops-desk"')
      .option('--operator <email>', "the operator the token belongs to: it reaches what they reach (or less, with --tenant), never more, and stops when they are disabled")
      .option('--tenant <id>', 'a tenant the token reaches (repeat for several), with --role', collect)
      .option('--role <role>', 'the role on each --tenant: viewer, triager or city-admin')
      .option('--expires <time>', 'ISO 8601 time the token stops working'),
  ).action(async (opts: JsonOption & { name: string; operator?: string; tenant?: string[]; role?: string; expires?: string }) => {
    if ((opts.tenant?.length ?? 0) > 0 !== (opts.role !== undefined)) throw new CliError('--tenant and --role go together', 2);
    const t = await withRuntime(io, (rt) =>
      createAdminToken(rt, cliActorOf(rt), { name: opts.name, operator: opts.operator, grants: (opts.tenant ?? []).map((tenantId) => ({ tenantId, role: opts.role! })), expiresAt: opts.expires }),
    );
    printResult(io, opts, t, () =>
      [
        `Created admin token ${describe(t)}`,
        'Token (shown once, store it now):',
        `  ${t.token}`,
        `Try it: curl -H "Authorization: Bearer ${t.token}" http://localhost:8080/api/admin/tenants`,
      ].join('\n'),
    );
  });

  jsonOption(cmd.command('list').description('list admin tokens (never the tokens themselves)')).action(async (opts: JsonOption) => {
    const tokens = await withRuntime(io, (rt) => listAllAdminTokens(rt));
    printResult(io, opts, { tokens }, () => (tokens.length ? tokens.map(describe).join('\n') : 'No admin tokens yet.'));
  });

  jsonOption(cmd.command('revoke').description('revoke an admin token; it stops working at once').argument('<id>', 'token id')).action(async (id: string, opts: JsonOption) => {
    const t = await withRuntime(io, (rt) => revokeAdminTokenById(rt, cliActorOf(rt), id));
    printResult(io, opts, t, () => `Revoked admin token ${describe(t)}`);
  });
}
