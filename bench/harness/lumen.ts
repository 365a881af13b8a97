import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { msSince } from './stats.js';
import { run, type RunResult } from './tools.js';
import { freePort } from '../../test/support/free-port.js';

/** What every Lumen process of the bench gets: its database, key and data directory. */
export interface LumenSetup {
  readonly executable: string;
  readonly databaseUrl: string;
  readonly secretKey: string;
  readonly dataDir: string;
}

/**
 * The environment of a bench run: production behaviour (no response validation, info
 * logs off) except that loopback targets are allowed, because the webhook receiver of
 * the bench listens on 127.0.0.1, and the per-key quota is lifted so load is not
 * answered with 429.
 */
export function lumenEnv(setup: LumenSetup, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LUMEN_') && k !== 'DATABASE_URL' && k !== 'PORT' && k !== 'HOST') env[k] = v;
  return {
    ...env,
    DATABASE_URL: setup.databaseUrl,
    LUMEN_SECRET_KEY: setup.secretKey,
    LUMEN_DATA_DIR: setup.dataDir,
    LUMEN_ENVIRONMENT: 'bench',
    LUMEN_LOG_LEVEL: 'warn',
    LUMEN_ALLOW_LOOPBACK: 'true',
    LUMEN_VALIDATE_RESPONSES: 'false',
    LUMEN_RATE_LIMIT_PER_MINUTE: '10000000',
    // The load rows send up to 64 simultaneous requests from one key.
    LUMEN_INTAKE_CONCURRENCY_PER_KEY: '10000',
    LUMEN_AUTH_FAILURES_PER_MINUTE: '0',
    ...extra,
  };
}

/** Runs `lumen <args>` to completion (a CLI command). */
export function lumenCli(setup: LumenSetup, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<RunResult> {
  return run(setup.executable, args, { env: lumenEnv(setup, extraEnv) });
}

/** Runs `lumen <args> --json` and parses its one JSON object; a failure is an error. */
export async function lumenJson<T>(setup: LumenSetup, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<T> {
  const r = await lumenCli(setup, [...args, '--json'], extraEnv);
  if (r.code !== 0) throw new Error(`lumen ${args.join(' ')} exited with ${r.code}: ${r.stderr.trim().slice(-1500)}`);
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`lumen ${args.join(' ')} --json printed no JSON object: ${r.stdout.slice(0, 500)}`);
  }
}

/** True when the executable knows the command (`lumen <words> --help` exits 0). */
export async function hasCommand(setup: LumenSetup, words: readonly string[]): Promise<boolean> {
  const r = await lumenCli(setup, [...words, '--help']);
  // An unknown sub-command exits non-zero; the usage line must also name the last word.
  return r.code === 0 && new RegExp(`Usage: lumen .*${words[words.length - 1]}`).test(r.stdout);
}


function getStatus(url: string, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** A running `lumen serve` on 127.0.0.1. */
export class LumenServer {
  private output: string[] = [];
  private exited: Promise<void>;

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
    /** Spawn to the first 200 from /readyz, in ms. */
    readonly readyMs: number,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resident set size of the process now, from /proc (bytes). */
  rssBytes(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
    if (!m) throw new Error(`no VmRSS in /proc/${this.pid}/status`);
    return Number(m[1]) * 1024;
  }

  /** The last lines Lumen printed (for error messages). */
  recentOutput(): string {
    return this.output.join('').split('\n').slice(-30).join('\n');
  }

  static async start(setup: LumenSetup, opts: { env?: Record<string, string>; readyTimeoutMs?: number } = {}): Promise<LumenServer> {
    const port = await freePort();
    const started = process.hrtime.bigint();
    const child = spawn(setup.executable, ['serve'], {
      env: lumenEnv(setup, { PORT: String(port), HOST: '127.0.0.1', ...opts.env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    const keep = (d: Buffer) => {
      output.push(d.toString('utf8'));
      if (output.length > 200) output.splice(0, output.length - 200);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let exitCode: number | null | undefined;
    child.once('exit', (code) => (exitCode = code));
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
    const url = `http://127.0.0.1:${port}/readyz`;
    for (;;) {
      if (exitCode !== undefined) throw new Error(`lumen serve exited with ${exitCode} before it was ready:\n${output.join('').slice(-3000)}`);
      const status = await getStatus(url, 1000);
      if (status === 200) break;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`lumen serve was not ready within ${opts.readyTimeoutMs ?? 60_000} ms:\n${output.join('').slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    const server = new LumenServer(child, port, msSince(started));
    server.output = output;
    return server;
  }

  /** SIGTERM and wait for the process to end (SIGKILL after 20 s). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(timer);
  }
}
