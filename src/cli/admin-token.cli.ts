import type { Command } from 'commander';
import { cliActor } from '../services/audit/index.js';
import { createAdminToken, listAllAdminTokens, revokeAdminTokenById, type AdminTokenView } from '../services/operators/index.js';
import { jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

const describe = (t: AdminTokenView): string => `${t.id}  ${t.name}  ${t.keyPrefix}…  created=${t.createdAt}${t.revokedAt ? `  REVOKED ${t.revokedAt}` : ''}`;

export function registerAdminTokenCommands(program: Command, io: CliIo): void {
  const cmd = program.command('admin-token').description('tokens of the administrative API (/api/admin)');

  jsonOption(cmd.command('create').description('issue an admin token (printed once)').requiredOption('--name <name>', 'who or what uses the token, e.g. "ops-desk"')).action(
    async (opts: JsonOption & { name: string }) => {
      const t = await withRuntime(io, (rt) => createAdminToken(rt, cliActor(), opts.name));
      printResult(io, opts, t, () =>
        [
          `Created admin token ${describe(t)}`,
          'Token (shown once, store it now):',
          `  ${t.token}`,
          `Try it: curl -H "Authorization: Bearer ${t.token}" http://localhost:8080/api/admin/tenants`,
        ].join('\n'),
      );
    },
  );

  jsonOption(cmd.command('list').description('list admin tokens (never the tokens themselves)')).action(async (opts: JsonOption) => {
    const tokens = await withRuntime(io, (rt) => listAllAdminTokens(rt));
    printResult(io, opts, { tokens }, () => (tokens.length ? tokens.map(describe).join('\n') : 'No admin tokens yet.'));
  });

  jsonOption(cmd.command('revoke').description('revoke an admin token; it stops working at once').argument('<id>', 'token id')).action(async (id: string, opts: JsonOption) => {
    const t = await withRuntime(io, (rt) => revokeAdminTokenById(rt, cliActor(), id));
    printResult(io, opts, t, () => `Revoked admin token ${describe(t)}`);
  });
}
