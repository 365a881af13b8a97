import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { AppError } from '../lib/errors.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { openRuntime, type Runtime, type RuntimeOptions } from '../runtime.js';
import { cliActor, type Actor } from '../services/audit/index.js';
import { operatorForCli } from '../services/operators/index.js';

export interface CliIo {
  readonly env: Record<string, string | undefined>;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Where `-` reads from (secrets, files). Default: the process's standard input. */
  readonly stdin?: NodeJS.ReadableStream;
  /** The global `--as EMAIL` option, filled in before a command runs (buildProgram). */
  readonly as?: { email?: string };
  /** Whether standard input is a terminal (password prompts). Default: process.stdin.isTTY. */
  readonly isTTY?: boolean;
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

const actors = new WeakMap<Runtime, Actor>();

/**
 * Who a command acts as, for status history and the audit log: `cli:<system user>`, or
 * with `--as EMAIL` that operator (`cli:<email>`, and their id in the audit log). Either
 * way with the machine administrator's reach: whoever runs the CLI holds the database.
 */
export function cliActorOf(rt: Runtime): Actor {
  return actors.get(rt) ?? cliActor();
}

/** Opens the runtime (database, migrations, job queue) for one command and always closes it. */
export async function withRuntime<T>(io: CliIo, fn: (rt: Runtime) => Promise<T>, opts: RuntimeOptions = {}): Promise<T> {
  const { config, log } = cliConfig(io);
  const rt = await openRuntime(config, log, { migrate: true, work: false, poolSize: 4, direct: true, ...opts });
  try {
    if (io.as?.email) {
      const operator = await operatorForCli(rt, io.as.email).catch(() => {
        throw new CliError(`--as ${io.as!.email}: no enabled operator has this e-mail`);
      });
      actors.set(rt, cliActor({ id: operator.id, email: operator.email }));
    }
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

/**
 * A secret read from a file or from standard input (`-`), with its trailing newline
 * removed; or given by value, which every user of the machine can read in the process
 * list (/proc/PID/cmdline) and the shell keeps in its history: that prints a warning,
 * and is refused with LUMEN_ENVIRONMENT=production. `none` (clearing a secret) is no
 * secret and passes quietly.
 */
export async function secretOption(io: CliIo, value: string | undefined, file: string | undefined, name: string): Promise<string | undefined> {
  if (value !== undefined && file !== undefined) throw new CliError(`--${name} and --${name}-file: give one of them`, 2);
  if (value !== undefined && value !== 'none') {
    const how = `use --${name}-file PATH, or --${name}-file - to read it from standard input`;
    if (io.env.LUMEN_ENVIRONMENT === 'production') throw new CliError(`--${name} on the command line is refused in production: every user of this machine can read it in the process list; ${how}`, 2);
    io.stderr.write(`warning: --${name} on the command line can be read by every user of this machine (process list, shell history); ${how}\n`);
  }
  if (file === undefined) return value;
  const text = file === '-' ? await readAll(io.stdin ?? process.stdin) : await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`--${name}-file ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`, 2);
  });
  return text.replace(/\r?\n$/, '');
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
  return Buffer.concat(chunks).toString('utf8');
}
