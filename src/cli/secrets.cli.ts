import type { Command } from 'commander';
import { rewrapSecrets } from '../services/partners/index.js';
import { CliError, jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

export function registerSecretsCommands(program: Command, io: CliIo): void {
  const secrets = program.command('secrets').description('the secrets Lumen stores encrypted with LUMEN_SECRET_KEY (webhook secrets, polling keys)');

  jsonOption(
    secrets
      .command('rewrap')
      .description('seal every stored secret again under LUMEN_SECRET_KEY (after a rotation: old key in LUMEN_SECRET_KEY_PREVIOUS); safe to run again'),
  ).action(async (opts: JsonOption) => {
    const result = await withRuntime(io, (rt) => rewrapSecrets(rt, (msg) => io.stderr.write(`${msg}\n`)));
    printResult(io, opts, result, () =>
      [
        `${result.rewrapped} secret(s) sealed again under LUMEN_SECRET_KEY; ${result.current} already were.`,
        ...result.failed.map((f) => `  cannot open ${f.partnerCode} ${f.column}: ${f.error}`),
        ...(result.failed.length === 0 ? ['LUMEN_SECRET_KEY_PREVIOUS is no longer needed.'] : []),
      ].join('\n'),
    );
    if (result.failed.length > 0) throw new CliError(`${result.failed.length} stored secret(s) could not be opened with the configured keys`, 1);
  });
}
