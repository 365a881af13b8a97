import path from 'node:path';
import type { Command } from 'commander';
import { backupEmbedded, restoreEmbedded, RestoreRefused } from '../db/backup.js';
import { CliError, cliConfig, jsonOption, printResult, type CliIo, type JsonOption } from './context.js';

function requireEmbedded(io: CliIo, what: string): { dataDir: string } {
  const { config } = cliConfig(io);
  if (config.databaseUrl !== null) {
    throw new CliError(`lumen ${what} works on the embedded database (LUMEN_DATA_DIR); with DATABASE_URL set, use your server's own tools (pg_dump -Fc, pgBackRest, Barman): see docs/operations.md`, 2);
  }
  return { dataDir: config.dataDir };
}

export function registerBackupCommands(program: Command, io: CliIo): void {
  const progress = (msg: string) => io.stderr.write(`${msg}\n`);

  jsonOption(
    program
      .command('backup')
      .description('online backup of the embedded database (and the rest of LUMEN_DATA_DIR) into a new folder; lumen serve may keep running')
      .option('--to <dir>', 'folder that receives lumen-backup-<time>/ (default: <LUMEN_DATA_DIR>/backups)'),
  ).action(async (opts: JsonOption & { to?: string }) => {
    const { dataDir } = requireEmbedded(io, 'backup');
    const { openEmbeddedDatabase } = await import('../db/embedded/index.js');
    const db = await openEmbeddedDatabase({ dataDir, log: (msg) => progress(msg) });
    try {
      const { dir, manifest } = await backupEmbedded({ dataDir, url: db.url, to: opts.to ?? path.join(dataDir, 'backups'), progress });
      printResult(io, opts, { dir, ...manifest }, () => `Backup written to ${dir} (${manifest.files} files, ${(manifest.bytes / 1024 / 1024).toFixed(1)} MiB, PostgreSQL ${manifest.postgresMajor}).\nRestore with: lumen restore --from ${dir}`);
    } finally {
      await db.stop();
    }
  });

  jsonOption(
    program
      .command('restore')
      .description('restore a backup made by lumen backup into LUMEN_DATA_DIR (lumen serve must be stopped)')
      .requiredOption('--from <dir>', 'a lumen-backup-<time>/ folder')
      .option('--force', 'move the current data directory aside (to <dir>.before-restore-<time>) instead of refusing'),
  ).action(async (opts: JsonOption & { from: string; force?: boolean }) => {
    const { dataDir } = requireEmbedded(io, 'restore');
    const { processesIn } = await import('../db/embedded/index.js');
    if ((await processesIn(path.join(dataDir, 'postgres'))).length > 0) {
      throw new CliError(`the embedded database in ${dataDir} is running: stop lumen serve (and every other lumen command) first`, 2);
    }
    try {
      const { manifest, movedAside } = await restoreEmbedded({ from: opts.from, dataDir, force: !!opts.force, progress });
      printResult(io, opts, { dataDir, movedAside, ...manifest }, () =>
        [`Restored the backup of ${manifest.createdAt} into ${dataDir}.`, ...(movedAside ? [`The previous data directory is kept at ${movedAside}.`] : []), 'Start lumen serve: PostgreSQL replays the backup\'s WAL on its first start.'].join('\n'),
      );
    } catch (err) {
      if (err instanceof RestoreRefused) throw new CliError(err.message, 2);
      throw err;
    }
  });
}
