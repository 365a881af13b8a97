import { spawn, type SpawnOptions } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Absolute path of an executable found on PATH, or null. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit, in ms. */
  ms: number;
}

export interface RunOptions extends Pick<SpawnOptions, 'env' | 'cwd'> {
  /** Written to the child's stdin, which is then closed. */
  input?: string;
  /** Discard stdout instead of collecting it (large outputs such as COPY). */
  discardStdout?: boolean;
  /** Kill the child after this many ms. Default: no limit. */
  timeoutMs?: number;
}

/** Runs a command to completion and collects its output; never throws for a non-zero exit. */
export function run(command: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', opts.discardStdout ? 'ignore' : 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : null;
    child.on('error', (err) => {
      if (timer) clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Number(process.hrtime.bigint() - started) / 1e6 });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Like run(), but a non-zero exit is an error carrying the command's stderr. */
export async function runOk(command: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(command, args, opts);
  if (r.code !== 0) {
    const shown = [path.basename(command), ...args].join(' ');
    throw new Error(`${shown} exited with ${r.code ?? r.signal}: ${(r.stderr || r.stdout).trim().slice(-2000)}`);
  }
  return r;
}
