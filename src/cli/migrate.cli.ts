import type { Command } from 'commander';
import { latestMigrationId } from '../db/migrator.js';
import { jsonOption, printResult, withRuntime, type CliIo, type JsonOption } from './context.js';

export function registerMigrateCommand(program: Command, io: CliIo): void {
  jsonOption(program.command('migrate').description('apply pending database migrations (also done by serve)')).action(async (opts: JsonOption) => {
    await withRuntime(io, async () => {});
    const current = latestMigrationId();
    printResult(io, opts, { migrated: true, current }, () => `Database is at migration ${current}.`);
  });
}
