import type { Command } from 'commander';
import {
  createOperator,
  disableOperator,
  enableOperator,
  grantRole,
  listOperators,
  PLATFORM_ACCESS,
  revokeRole,
  setOperatorPassword,
  setPlatformAdmin,
  TENANT_ROLES,
  type OperatorView,
} from '../services/operators/index.js';
import { CliError, cliActorOf, jsonOption, printResult, secretOption, withRuntime, type CliIo, type JsonOption } from './context.js';

const ROLE_HELP = `${TENANT_ROLES.join(', ')} (per tenant, with --tenant), or platform-admin`;

export function describeOperator(o: OperatorView): string {
  const roles = [o.platformAdmin ? 'platform-admin' : null, ...o.grants.map((g) => `${g.role}@${g.tenantName} (${g.tenantId})`)].filter(Boolean).join(', ') || 'no roles';
  return `${o.id}  ${o.email}  ${o.name}  ${roles}${o.passwordSet ? '' : '  NO PASSWORD'}${o.disabledAt ? `  DISABLED ${o.disabledAt}` : ''}`;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * A password read without echo on a terminal (asked twice), or from --password-file
 * (a file, or - for standard input). Never from an argument: it would show in process
 * lists and shell history.
 */
async function readPassword(io: CliIo, file: string | undefined): Promise<string> {
  if (file !== undefined) return (await secretOption(io, undefined, file, 'password'))!;
  const input = (io.stdin ?? process.stdin) as NodeJS.ReadStream;
  if (!(io.isTTY ?? input.isTTY)) throw new CliError('no terminal to ask for the password on: give --password-file PATH (or - for standard input)', 2);
  const first = await promptHidden(io, input, 'New password: ');
  const second = await promptHidden(io, input, 'Again: ');
  if (first !== second) throw new CliError('the two passwords differ; nothing changed');
  return first;
}

function promptHidden(io: CliIo, input: NodeJS.ReadStream, question: string): Promise<string> {
  io.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const raw = typeof input.setRawMode === 'function';
    if (raw) input.setRawMode(true);
    input.setEncoding('utf8');
    const done = (): void => {
      input.off('data', onData);
      if (raw) input.setRawMode(false);
      input.pause();
      io.stderr.write('\n');
    };
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          done();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          done();
          reject(new CliError('cancelled', 130));
          return;
        }
        value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
      }
    };
    input.on('data', onData);
    input.resume();
  });
}

export function registerOperatorCommands(program: Command, io: CliIo): void {
  const cmd = program.command('operator').description('operators: the people who run Lumen, their roles per tenant and passwords');

  jsonOption(
    cmd
      .command('create')
      .description('create an operator; without --password-file Lumen makes a password and shows it once')
      .requiredOption('--email <email>', 'e-mail address (the sign-in name)')
      .requiredOption('--name <name>', 'full name')
      .requiredOption('--role <role>', ROLE_HELP)
      .option('--tenant <id>', 'tenant the role applies to (repeat for several)', collect)
      .option('--password-file <path>', 'read the password from a file, or - for standard input'),
  ).action(async (opts: JsonOption & { email: string; name: string; role: string; tenant?: string[]; passwordFile?: string }) => {
    const platformAdmin = opts.role === 'platform-admin';
    if (!platformAdmin && !(TENANT_ROLES as readonly string[]).includes(opts.role)) throw new CliError(`--role must be one of ${ROLE_HELP}`, 2);
    if (!platformAdmin && !opts.tenant?.length) throw new CliError(`--role ${opts.role} needs at least one --tenant`, 2);
    const password = opts.passwordFile !== undefined ? await readPassword(io, opts.passwordFile) : undefined;
    const created = await withRuntime(io, (rt) =>
      createOperator(rt, cliActorOf(rt), { email: opts.email, name: opts.name, platformAdmin, grants: (opts.tenant ?? []).map((tenantId) => ({ tenantId, role: opts.role })), password }),
    );
    printResult(io, opts, created, () =>
      [`Created operator ${describeOperator(created.operator)}`, ...(created.initialPassword ? ['Password (shown once, hand it over safely; change it with `lumen operator set-password`):', `  ${created.initialPassword}`] : [])].join('\n'),
    );
  });

  jsonOption(cmd.command('list').description('list operators and their roles (never passwords)')).action(async (opts: JsonOption) => {
    const operators = await withRuntime(io, (rt) => listOperators(rt, PLATFORM_ACCESS));
    printResult(io, opts, { operators }, () => (operators.length ? operators.map(describeOperator).join('\n') : 'No operators yet.'));
  });

  jsonOption(cmd.command('disable').description('disable an operator: their sessions and tokens stop at once').argument('<operator>', 'e-mail or id')).action(async (ref: string, opts: JsonOption) => {
    const o = await withRuntime(io, (rt) => disableOperator(rt, cliActorOf(rt), ref));
    printResult(io, opts, o, () => `Disabled ${describeOperator(o)}`);
  });

  jsonOption(cmd.command('enable').description('enable a disabled operator again').argument('<operator>', 'e-mail or id')).action(async (ref: string, opts: JsonOption) => {
    const o = await withRuntime(io, (rt) => enableOperator(rt, cliActorOf(rt), ref));
    printResult(io, opts, o, () => `Enabled ${describeOperator(o)}`);
  });

  jsonOption(
    cmd
      .command('set-password')
      .description('set an operator\'s password (asked on the terminal, or --password-file); their sessions end')
      .argument('<operator>', 'e-mail or id')
      .option('--password-file <path>', 'read the password from a file, or - for standard input'),
  ).action(async (ref: string, opts: JsonOption & { passwordFile?: string }) => {
    const password = await readPassword(io, opts.passwordFile);
    const o = await withRuntime(io, (rt) => setOperatorPassword(rt, cliActorOf(rt), ref, password));
    printResult(io, opts, o, () => `New password set for ${o.email}; their sessions ended`);
  });

  jsonOption(
    cmd
      .command('grant')
      .description('give an operator a role on a tenant (replacing the one they had there), or platform-admin')
      .argument('<operator>', 'e-mail or id')
      .requiredOption('--role <role>', ROLE_HELP)
      .option('--tenant <id>', 'the tenant (not with platform-admin)'),
  ).action(async (ref: string, opts: JsonOption & { role: string; tenant?: string }) => {
    const o = await withRuntime(io, (rt) => {
      if (opts.role === 'platform-admin') return setPlatformAdmin(rt, cliActorOf(rt), ref, true);
      if (!opts.tenant) throw new CliError(`--role ${opts.role} needs --tenant`, 2);
      return grantRole(rt, cliActorOf(rt), ref, opts.tenant, opts.role);
    });
    printResult(io, opts, o, () => describeOperator(o));
  });

  jsonOption(
    cmd
      .command('revoke')
      .description("take an operator's role on a tenant away (--tenant), or platform-admin (--role platform-admin)")
      .argument('<operator>', 'e-mail or id')
      .option('--tenant <id>', 'the tenant')
      .option('--role <role>', 'platform-admin to take that away; with --tenant, ignored (the tenant\'s role goes)'),
  ).action(async (ref: string, opts: JsonOption & { role?: string; tenant?: string }) => {
    const o = await withRuntime(io, (rt) => {
      if (opts.role === 'platform-admin' && !opts.tenant) return setPlatformAdmin(rt, cliActorOf(rt), ref, false);
      if (!opts.tenant) throw new CliError('give --tenant ID (or --role platform-admin)', 2);
      return revokeRole(rt, cliActorOf(rt), ref, opts.tenant);
    });
    printResult(io, opts, o, () => describeOperator(o));
  });
}
