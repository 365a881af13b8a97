import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { versionLine } from '../version.js';
import { CliError, describeError, type CliIo } from './context.js';
import { registerAdminTokenCommands } from './admin-token.cli.js';
import { registerAlertCommands } from './alert.cli.js';
import { registerAuditCommands } from './audit.cli.js';
import { registerAttachmentCommands } from './attachment.cli.js';
import { registerBackupCommands } from './backup.cli.js';
import { registerSecretsCommands } from './secrets.cli.js';
import { registerInboundCommands } from './inbound.cli.js';
import { registerMigrateCommand } from './migrate.cli.js';
import { registerOperatorCommands } from './operator.cli.js';
import { registerOrderCommands } from './order.cli.js';
import { registerPartnerCommands } from './partner.cli.js';
import { registerReasonCommands } from './reason.cli.js';
import { registerServeCommand } from './serve.cli.js';
import { registerDemoCommands } from './demo.cli.js';
import { registerPoleCommands } from './pole.cli.js';
import { registerTelemetryCommands } from './telemetry.cli.js';
import { registerTeamCommands } from './team.cli.js';
import { registerTenantCommands } from './tenant.cli.js';
import { registerWebhookCommands } from './webhook.cli.js';

/** Every command group, one file each. */
const COMMAND_GROUPS = [registerServeCommand, registerMigrateCommand, registerTenantCommands, registerPartnerCommands, registerAdminTokenCommands, registerOperatorCommands, registerTeamCommands, registerAlertCommands, registerOrderCommands, registerAuditCommands, registerInboundCommands, registerReasonCommands, registerAttachmentCommands, registerPoleCommands, registerTelemetryCommands, registerDemoCommands, registerWebhookCommands, registerBackupCommands, registerSecretsCommands];

export function buildProgram(outer: CliIo): Command {
  const as: { email?: string } = {};
  const io: CliIo = { ...outer, as };
  const program = new Command('lumen')
    .description('Lumen: partner integration service of the street-lighting maintenance platform')
    .version(versionLine(), '-v, --version', 'print the version of Lumen and of its Node runtime')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .option('--as <email>', 'record the actions of this command as this operator (cli:<email>) instead of the system user')
    .exitOverride();
  program.hook('preAction', (_program, action) => {
    as.email = (action.optsWithGlobals() as { as?: string }).as;
  });
  for (const register of COMMAND_GROUPS) register(program, io);
  program.commands.forEach(function applyToAll(cmd: Command) {
    cmd.exitOverride().configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) }).showHelpAfterError('(run with --help for usage)');
    cmd.commands.forEach(applyToAll);
  });
  return program;
}

/** Runs one CLI invocation and returns its exit code (0 ok, 1 failure, 2 usage). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof ConfigError) {
      io.stderr.write(`lumen: ${err.message}\n`);
      return 1;
    }
    if (err instanceof CliError) {
      io.stderr.write(`lumen: ${err.message}\n`);
      return err.exitCode;
    }
    io.stderr.write(`lumen: ${describeError(err)}\n`);
    return 1;
  }
}
