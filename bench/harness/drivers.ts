import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { childCpuMs, withChildCpu } from './cpu.js';
import { runOk } from './tools.js';

/** A driver of bench/drivers/ runs as its own Node process (TypeScript through tsx). */
function driverPath(repo: string, name: string): string {
  return path.join(repo, 'bench/drivers', name);
}

/** Runs a driver to completion with a JSON input and parses the one JSON object it prints. */
export async function runDriver<T>(repo: string, name: string, input: unknown): Promise<T> {
  const r = await runOk(process.execPath, ['--import', 'tsx', driverPath(repo, name), JSON.stringify(input)], { cwd: repo });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`driver ${name} printed no JSON result: ${r.stdout.slice(-500)} ${r.stderr.slice(-500)}`);
  }
}

/** runDriver, plus the CPU time the driver's process used (null where it cannot be read). */
export async function runDriverMeasured<T>(repo: string, name: string, input: unknown): Promise<{ result: T; cpuMs: number | null }> {
  const wrapped = withChildCpu(process.execPath, ['--import', 'tsx', driverPath(repo, name), JSON.stringify(input)]);
  const r = await runOk(wrapped.command, wrapped.args, { cwd: repo });
  const last = r.stdout.trim().split('\n').filter((l) => !l.startsWith('CHILD_CPU_TICKS')).pop() ?? '';
  try {
    return { result: JSON.parse(last) as T, cpuMs: childCpuMs(r.stdout) };
  } catch {
    throw new Error(`driver ${name} printed no JSON result: ${r.stdout.slice(-500)} ${r.stderr.slice(-500)}`);
  }
}

/** Starts a long-lived driver with an IPC channel (the webhook receiver). */
export function forkDriver(repo: string, name: string, args: string[] = []): ChildProcess {
  return fork(driverPath(repo, name), args, { cwd: repo, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}
