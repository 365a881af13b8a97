import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { TrustedProxies } from '../lib/trusted-proxies.js';

/**
 * Caps on the connections one process holds, so that idle or half-sent connections
 * (a client that opens thousands and never finishes a request) cannot take every file
 * descriptor: `/livez` stops answering, and database connections fail with EMFILE.
 *
 * - Per address: past `perAddress` connections from one client address (a trusted
 *   proxy's own address is exempt: many clients share it), a new one is closed at once.
 * - In all: past `total`, a new connection is only for health checks (`/livez`,
 *   `/readyz`): it gets a short deadline to send its request and anything else is
 *   answered 503; past `total + reserve` it is closed at once. So the flood of one
 *   address never leaves another address, or the orchestrator's probe, without an answer.
 */
export interface ConnectionLimits {
  readonly total: number;
  readonly perAddress: number;
  /** Connections kept beyond `total` for health checks. */
  readonly reserve: number;
}

/** Headroom of descriptors the process needs besides client connections: database pool, blobs, logs, the embedded server's pipes. */
const OTHER_DESCRIPTORS = 256;

/**
 * The open-files limit of this process, raised to its hard limit first when the soft one
 * is lower (the process may; `prlimit` from util-linux does it, Node has no call for it).
 * Returns the soft limit in force afterwards, or null when it cannot be read.
 */
export function raiseOpenFilesLimit(log?: (msg: string, fields: Record<string, unknown>) => void): number | null {
  const read = (): { soft: number; hard: number } | null => {
    try {
      const line = readFileSync('/proc/self/limits', 'utf8')
        .split('\n')
        .find((l) => l.startsWith('Max open files'));
      const m = line ? /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/.exec(line) : null;
      if (!m) return null;
      const num = (v: string) => (v === 'unlimited' ? 1_048_576 : Number(v));
      return { soft: num(m[1]!), hard: num(m[2]!) };
    } catch {
      return null;
    }
  };
  const before = read();
  if (!before) return null;
  if (before.soft < before.hard) {
    const r = spawnSync('prlimit', ['--pid', String(process.pid), `--nofile=${before.hard}:${before.hard}`], { stdio: 'ignore', timeout: 5000 });
    const after = read();
    if (after && after.soft > before.soft) log?.('open-files limit raised to the hard limit', { from: before.soft, to: after.soft });
    else log?.('open-files limit could not be raised (set LimitNOFILE or ulimit -n)', { soft: before.soft, hard: before.hard, prlimit: r.error ? 'missing' : r.status });
    return after?.soft ?? before.soft;
  }
  return before.soft;
}

/** Caps from the configuration, else from the open-files limit (`files`): most of it for clients, a tenth of that per address. */
export function connectionLimits(files: number | null, configured: { total: number | null; perAddress: number | null }): ConnectionLimits {
  const fromFiles = files === null ? 10_000 : Math.max(64, Math.floor((files - OTHER_DESCRIPTORS) * 0.9));
  const total = configured.total ?? fromFiles;
  const perAddress = configured.perAddress ?? Math.max(16, Math.min(1024, Math.floor(total / 10)));
  const reserve = Math.max(8, Math.min(64, Math.floor(total / 50)));
  return { total, perAddress, reserve };
}

export class ConnectionGuard {
  private total = 0;
  private readonly byAddress = new Map<string, number>();
  /** Connections refused since start, by cause (for the metrics and the reliability report). */
  readonly refused = { perAddress: 0, total: 0 };

  constructor(
    readonly limits: ConnectionLimits,
    private readonly proxies: TrustedProxies,
  ) {}

  get open(): number {
    return this.total;
  }

  /**
   * Admits a new connection, or destroys it. Admitted past the total, it is marked for
   * health checks only (`healthOnly`), with `healthDeadlineMs` to send its request.
   */
  admit(socket: Socket, healthDeadlineMs = 2000): void {
    const address = socket.remoteAddress ?? 'unknown';
    const exempt = this.proxies.trusts(address);
    const mine = this.byAddress.get(address) ?? 0;
    if (!exempt && mine >= this.limits.perAddress) {
      this.refused.perAddress++;
      socket.destroy();
      return;
    }
    if (this.total >= this.limits.total + this.limits.reserve) {
      this.refused.total++;
      socket.destroy();
      return;
    }
    if (this.total >= this.limits.total) {
      (socket as Socket & { lumenHealthOnly?: boolean }).lumenHealthOnly = true;
      socket.setTimeout(healthDeadlineMs, () => socket.destroy());
    }
    this.total++;
    this.byAddress.set(address, mine + 1);
    socket.once('close', () => {
      this.total--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left <= 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    });
  }
}

/** The connection was admitted past the total: only health checks are answered on it. */
export function healthOnly(socket: Socket): boolean {
  return (socket as Socket & { lumenHealthOnly?: boolean }).lumenHealthOnly === true;
}
