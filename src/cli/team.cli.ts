import type { Command } from 'commander';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import type { AdminTeam } from '../../generated/admin/types.gen.js';
import { createTeam, listTeams } from '../services/operations/index.js';
import { jsonOption, printResult, cliActorOf, withRuntime, type CliIo, type JsonOption } from './context.js';

const describe = (t: AdminTeam): string => `${t.id}  ${t.name}`;

export function registerTeamCommands(program: Command, io: CliIo): void {
  const team = program.command('team').description('field teams that service orders are assigned to');

  jsonOption(team.command('create').description('create a team of a tenant').requiredOption('--tenant <id>', 'tenant id').requiredOption('--name <name>', 'team name, unique in the tenant')).action(
    async (opts: JsonOption & { tenant: string; name: string }) => {
      const t = await withRuntime(io, (rt) => createTeam(rt, cliActorOf(rt), opts.tenant, opts.name));
      printResult(io, opts, t, () => `Created team ${describe(t)}`);
    },
  );

  jsonOption(team.command('list').description("list a tenant's teams").requiredOption('--tenant <id>', 'tenant id')).action(async (opts: JsonOption & { tenant: string }) => {
    const teams = await withRuntime(io, (rt) => listTeams(rt, PLATFORM_ACCESS, opts.tenant));
    printResult(io, opts, { items: teams }, () => (teams.length ? teams.map(describe).join('\n') : 'No teams yet.'));
  });
}
