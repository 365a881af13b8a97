import { spawn, type ChildProcess } from 'node:child_process';

/** `lumen serve` as `npm start` runs it, in a process of its own, with its output kept. */
export interface ServedLumen {
  readonly process: ChildProcess;
  readonly base: string;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, and wait for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx src/main.ts serve` on `port` with `env` (optionally under a
 * command that wraps it, such as `prlimit --nofile=…`), and resolves once /readyz answers
 * 200 (polled, with a deadline); rejects with its output when it exits or is not ready
 * within 60 s.
 */
export async function serveLumen(env: Record<string, string>, port: number, wrap: readonly string[] = []): Promise<ServedLumen> {
  const command = [...wrap, process.execPath, '--import', 'tsx', 'src/main.ts', 'serve'];
  const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`lumen serve exited before ready:\n${out}`);
    const ok = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`lumen serve not ready within 60 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    process: child,
    base,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
