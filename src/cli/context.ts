import { Command, Option } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { AppError } from '../lib/errors.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { openRuntime, type Runtime, type RuntimeOptions } from '../runtime.js';

export interface CliIo {
  readonly env: Record<string, string | undefined>;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Where `-` reads from (secrets, files). Default: the process's standard input. */
  readonly stdin?: NodeJS.ReadableStream;
}

/** Thrown by a command to end with a message on stderr and a non-zero exit. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export interface JsonOption {
  json?: boolean;
}

/** Adds --json, which every command takes: then exactly one JSON object goes to stdout. */
export function jsonOption(cmd: Command): Command {
  return cmd.addOption(new Option('--json', 'print exactly one JSON object on stdout'));
}

export function printResult(io: CliIo, opts: JsonOption, value: object, human: () => string): void {
  if (opts.json) io.stdout.write(JSON.stringify(value) + '\n');
  else io.stdout.write(human().replace(/\n?$/, '\n'));
}

/** Human text for a service error: the detail plus each field problem. */
export function describeError(err: unknown): string {
  if (err instanceof AppError) {
    const lines = [err.detail('en')];
    for (const e of err.errors ?? []) lines.push(`  ${e.pointer.replace(/^\//, '') || '(body)'}: ${e.message}`);
    return lines.join('\n');
  }
  return err instanceof Error ? err.message : String(err);
}

/** Config and a quiet logger for one-shot commands (logs go to stderr, stdout stays clean). */
export function cliConfig(io: CliIo): { config: Config; log: Logger } {
  const config = loadConfig(io.env);
  const level = io.env.LUMEN_LOG_LEVEL ? config.logLevel : 'warn';
  return { config, log: createLogger(level, io.stderr) };
}

/** Opens the runtime (database, migrations, job queue) for one command and always closes it. */
export async function withRuntime<T>(io: CliIo, fn: (rt: Runtime) => Promise<T>, opts: RuntimeOptions = {}): Promise<T> {
  const { config, log } = cliConfig(io);
  const rt = await openRuntime(config, log, { migrate: true, work: false, poolSize: 4, direct: true, ...opts });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
