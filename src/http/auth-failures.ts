/**
 * Failed authentications per client address, counted in this process. Each request
 * with an unknown key costs a database lookup; past the limit an address gets 429
 * (with Retry-After) before any lookup, on every surface, for the rest of its
 * one-minute window. Counted per instance, in memory: a guard against a flood of
 * guessed keys, not an exact quota (N instances allow up to N times the limit).
 * Behind a reverse proxy every client shares the proxy's address: set the limit
 * accordingly (LUMEN_AUTH_FAILURES_PER_MINUTE, 0 disables it).
 */
export class AuthFailureThrottle {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly perMinute: number,
    /** Addresses tracked at most; the oldest are forgotten first. */
    private readonly maxAddresses = 100_000,
  ) {}

  /** Seconds the address must wait before it may try a key again, or null. */
  retryAfter(address: string, now = Date.now()): number | null {
    if (this.perMinute <= 0) return null;
    const w = this.windows.get(address);
    if (!w || now - w.start >= 60_000 || w.failures < this.perMinute) return null;
    return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
  }

  /** Counts one failed authentication of the address. */
  fail(address: string, now = Date.now()): void {
    if (this.perMinute <= 0) return;
    const w = this.windows.get(address);
    if (!w || now - w.start >= 60_000) {
      this.windows.delete(address);
      this.windows.set(address, { start: now, failures: 1 });
      if (this.windows.size > this.maxAddresses) this.windows.delete(this.windows.keys().next().value!);
    } else {
      w.failures++;
    }
  }
}
