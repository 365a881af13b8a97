import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { median } from './stats.js';

/**
 * CPU time spent by each process of a measurement (Lumen, PostgreSQL, the load
 * client), read from /proc, so a figure can say where a request's time went on a
 * machine whose cores the three share. Linux only: elsewhere every figure is null.
 */

let ticksPerSecond: number | null = null;
function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

interface ProcStat {
  comm: string;
  /** utime + stime of the process (every thread), in ms. */
  ownMs: number;
  /** cutime + cstime: its waited-for children, in ms. */
  childrenMs: number;
}

/** /proc/<pid>/stat, or null when the process is gone. */
export function procStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name is in parentheses and may hold spaces: the fields follow the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  // After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
  const ms = (i: number) => (Number(f[i]) * 1000) / clockTicks();
  return { comm, ownMs: ms(11) + ms(12), childrenMs: ms(13) + ms(14) };
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

const PG_SHARED = /(walwriter|checkpointer|background writer|wal writer)/;

/** PostgreSQL processes that work for the bench database: its backends and the shared WAL and buffer writers. */
function postgresPids(database: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const st = procStat(pid);
    if (!st || st.comm !== 'postgres') continue;
    const cmd = cmdline(pid);
    if (cmd.includes(` ${database} `) || PG_SHARED.test(cmd)) pids.push(pid);
  }
  return pids;
}

/**
 * How long the main thread of a process has run on a core and waited on a run queue for
 * one, in ms, since it started (/proc/<pid>/schedstat: the thread whose id is the
 * process's). Null off Linux, without schedstats, or when the process is gone.
 */
export function schedStat(pid: number | 'self'): { runMs: number; waitMs: number } | null {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { runMs: run! / 1e6, waitMs: wait! / 1e6 } : null;
  } catch {
    return null;
  }
}

export interface CpuTotals {
  /** The Lumen server process, ms. */
  serverMs: number | null;
  /** PostgreSQL backends of the bench database plus its WAL and buffer writers, ms. */
  postgresMs: number | null;
  /** Time the server's main thread was ready to run and waited for a core, ms. */
  serverWaitMs: number | null;
  /** The same summed over the PostgreSQL processes counted in postgresMs, ms. */
  postgresWaitMs: number | null;
}

/**
 * Samples the CPU time of the server process and of the PostgreSQL processes every
 * 100 ms until stopped. A backend that appears during the run counts from zero and
 * one that ends counts up to its last sample (at most 100 ms of its CPU is missed).
 */
export class CpuSampler {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private readonly firstWait = new Map<number, number>();
  private readonly lastWait = new Map<number, number>();
  private serverStart: number | null = null;
  private serverEnd: number | null = null;
  private serverWaitStart: number | null = null;
  private serverWaitEnd: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly supported = process.platform === 'linux';

  constructor(
    private readonly database: string,
    private readonly serverPid: number | null,
  ) {}

  start(): this {
    if (!this.supported) return this;
    this.sample(true);
    this.timer = setInterval(() => this.sample(false), 100);
    return this;
  }

  private sample(initial: boolean): void {
    for (const pid of postgresPids(this.database)) {
      const st = procStat(pid);
      if (!st) continue;
      if (!this.first.has(pid)) this.first.set(pid, initial ? st.ownMs : 0);
      this.last.set(pid, st.ownMs);
      const sched = schedStat(pid);
      if (sched) {
        if (!this.firstWait.has(pid)) this.firstWait.set(pid, initial ? sched.waitMs : 0);
        this.lastWait.set(pid, sched.waitMs);
      }
    }
    if (this.serverPid !== null) {
      const st = procStat(this.serverPid);
      if (st) {
        if (initial) this.serverStart = st.ownMs;
        this.serverEnd = st.ownMs;
      }
      const sched = schedStat(this.serverPid);
      if (sched) {
        if (initial) this.serverWaitStart = sched.waitMs;
        this.serverWaitEnd = sched.waitMs;
      }
    }
  }

  stop(): CpuTotals {
    if (!this.supported) return { serverMs: null, postgresMs: null, serverWaitMs: null, postgresWaitMs: null };
    if (this.timer) clearInterval(this.timer);
    this.sample(false);
    let postgresMs = 0;
    for (const [pid, end] of this.last) postgresMs += end - (this.first.get(pid) ?? 0);
    let postgresWaitMs: number | null = this.lastWait.size ? 0 : null;
    for (const [pid, end] of this.lastWait) postgresWaitMs! += end - (this.firstWait.get(pid) ?? 0);
    const serverMs = this.serverStart !== null && this.serverEnd !== null ? this.serverEnd - this.serverStart : null;
    const serverWaitMs = this.serverWaitStart !== null && this.serverWaitEnd !== null ? this.serverWaitEnd - this.serverWaitStart : null;
    return { serverMs, postgresMs, serverWaitMs, postgresWaitMs };
  }
}

/** CPU of one request (or transaction) per process, for a figure's detail. */
export interface CpuPerRequest {
  serverMs: number | null;
  postgresMs: number | null;
  clientMs: number | null;
  /** Run-queue wait of the server's main thread, and of the PostgreSQL processes together, per request. */
  serverWaitMs: number | null;
  postgresWaitMs: number | null;
}

export function perRequest(totals: CpuTotals, clientMs: number | null, requests: number): CpuPerRequest {
  const per = (v: number | null) => (v === null || requests <= 0 ? null : v / requests);
  return {
    serverMs: per(totals.serverMs),
    postgresMs: per(totals.postgresMs),
    clientMs: per(clientMs),
    serverWaitMs: per(totals.serverWaitMs),
    postgresWaitMs: per(totals.postgresWaitMs),
  };
}

/** Per-process median of several runs' CPU per request. */
export function medianCpu(runs: readonly CpuPerRequest[]): CpuPerRequest {
  const pick = (f: (c: CpuPerRequest) => number | null) => {
    const v = runs.map(f).filter((x): x is number => x !== null);
    return v.length ? median(v) : null;
  };
  return {
    serverMs: pick((c) => c.serverMs),
    postgresMs: pick((c) => c.postgresMs),
    clientMs: pick((c) => c.clientMs),
    serverWaitMs: pick((c) => c.serverWaitMs),
    postgresWaitMs: pick((c) => c.postgresWaitMs),
  };
}

/**
 * "waiting for a core per request: Lumen's thread 210 µs, PostgreSQL 480 µs" (from each
 * thread's schedstat): how long the processes were ready to run while both cores were busy.
 */
export function describeWait(cpu: CpuPerRequest, serverName = 'Lumen'): string | null {
  if (cpu.serverWaitMs === null && cpu.postgresWaitMs === null) return null;
  // schedstat counts in nanoseconds: no clock-tick floor as in fmt().
  const us = (ms: number) => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${Math.round(ms * 1000)} µs`);
  const parts = [];
  if (cpu.serverWaitMs !== null) parts.push(`${serverName}'s thread ${us(cpu.serverWaitMs)}`);
  if (cpu.postgresWaitMs !== null) parts.push(`PostgreSQL ${us(cpu.postgresWaitMs)}`);
  return `waiting for a core per request: ${parts.join(', ')}`;
}

function fmt(ms: number | null): string {
  if (ms === null) return 'n/a';
  // /proc counts in clock ticks (10 ms): a client that used less than one over the run reads 0.
  if (ms === 0) return 'under one clock tick over the run';
  return ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(0)} µs`;
}

/** "CPU per request: Lumen 0.82 ms, PostgreSQL 0.41 ms, wrk 35 µs". */
export function describeCpu(cpu: CpuPerRequest, clientName: string | null, serverName = 'Lumen'): string {
  const parts = [];
  if (cpu.serverMs !== null) parts.push(`${serverName} ${fmt(cpu.serverMs)}`);
  parts.push(`PostgreSQL ${fmt(cpu.postgresMs)}`);
  if (clientName !== null) parts.push(`${clientName} ${fmt(cpu.clientMs)}`);
  return parts.join(', ');
}

/**
 * Wraps a command so that, when it ends, the shell that waited for it prints the
 * command's CPU time (its cutime + cstime) on a last line "CHILD_CPU_TICKS <n>".
 */
export function withChildCpu(command: string, args: readonly string[]): { command: string; args: string[] } {
  const script = '"$@"; s=$?; set -- $(sed "s/.*) //" /proc/$$/stat); echo "CHILD_CPU_TICKS $((${14} + ${15}))"; exit $s';
  return { command: 'sh', args: ['-c', script, 'sh', command, ...args] };
}

/** The CPU time printed by withChildCpu's wrapper, in ms (null when absent). */
export function childCpuMs(output: string): number | null {
  const m = /CHILD_CPU_TICKS (\d+)\s*$/.exec(output.trimEnd());
  return m ? (Number(m[1]) * 1000) / clockTicks() : null;
}
