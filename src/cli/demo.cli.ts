import type { Command } from 'commander';
import { seedDemo } from '../services/demo/index.js';
import { jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

export function registerDemoCommands(program: Command, io: CliIo): void {
  const demo = program.command('demo').description('a demo city to try Lumen with');

  jsonOption(
    demo
      .command('seed')
      .description('create a demo tenant with poles, telegestors reporting telemetry, a team, a few service orders and a partner holding every scope')
      .option('--code <code>', 'code of the demo partner', 'demo'),
  ).action(async (opts: JsonOption & { code: string }) => {
    const result = await withRuntime(io, (rt) => seedDemo(rt, opts.code));
    printResult(io, opts, result, () =>
      [
        `Created the demo tenant "${result.tenant.name}" (${result.tenant.id}) and the partner "${result.partner.code}".`,
        `API key (shown once, store it now):\n  ${result.partner.apiKey}`,
        `Try: curl -H "X-Api-Key: ${result.partner.apiKey}" "http://localhost:8080/api/external/poles?pageSize=5"`,
      ].join('\n'),
    );
  });
}
