import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { AppError } from '../lib/errors.js';
import { addRateLimitCounts } from '../db/repositories/api-key.repository.js';

export interface RateLimitDecision {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

const WINDOW_SECONDS = 60;

/**
 * The IETF draft headers (draft-ietf-httpapi-ratelimit-headers, structured-field form):
 * the quota and window, and what is left of it with the seconds to its end. Sent on
 * every answer to a counted request, 2xx and 4xx alike, not only on 429.
 */
export function rateLimitHeaders(d: RateLimitDecision): Record<string, string> {
  return { 'ratelimit-policy': `"default";q=${d.limit};w=${WINDOW_SECONDS}`, ratelimit: `"default";r=${d.remaining};t=${d.resetSeconds}` };
}

/**
 * Fixed one-minute windows per subject (a partner), counted in Postgres so every
 * instance enforces the same limit. Throws 429 rate-limited with Retry-After and the
 * IETF RateLimit-Policy / RateLimit headers when the window is spent.
 */
export async function enforceRateLimit(db: Database, subject: string, limitPerMinute: number, now = Date.now()): Promise<RateLimitDecision> {
  const window = rateLimitWindow(now);
  const { rows } = await sql<{ count: number }>`
    INSERT INTO rate_limit_window (subject, window_start, count) VALUES (${subject}, ${window}, 1)
    ON CONFLICT (subject, window_start) DO UPDATE SET count = rate_limit_window.count + 1
    RETURNING count`.execute(db);
  return decideRateLimit(db, rows[0]!.count, limitPerMinute, now);
}

/** The fixed window `now` falls in (the `window_start` of rate_limit_window). */
export function rateLimitWindow(now = Date.now()): number {
  return Math.floor(now / 1000 / WINDOW_SECONDS);
}

/**
 * The decision for a request counted as the `count`th of its window (by
 * enforceRateLimit, or by a statement that counted it with the key lookup): throws 429
 * past the limit.
 */
export function decideRateLimit(db: Database, count: number, limitPerMinute: number, now = Date.now()): RateLimitDecision {
  const window = rateLimitWindow(now);
  const resetSeconds = Math.max(1, (window + 1) * WINDOW_SECONDS - Math.floor(now / 1000));
  if (count === 1 && Math.random() < 0.05) {
    // Old windows are useless; forget them now and then, off the caller's path.
    void sql`DELETE FROM rate_limit_window WHERE window_start < ${window - 1}`.execute(db).catch(() => {});
  }
  const remaining = Math.max(0, limitPerMinute - count);
  if (count > limitPerMinute) {
    throw new AppError('rate-limited', { retryAfter: resetSeconds }, undefined, {
      'retry-after': String(resetSeconds),
      ...rateLimitHeaders({ limit: limitPerMinute, remaining: 0, resetSeconds }),
    });
  }
  return { limit: limitPerMinute, remaining, resetSeconds };
}

interface Tally {
  readonly subject: string;
  readonly window: number;
  /** The window's total across every instance, as the last reconciliation returned it. */
  base: number;
  /** Counted here and in the reconciliation in flight. */
  sent: number;
  /** Counted here since. */
  pending: number;
}

/**
 * Rate-limit windows counted in this process and reconciled with rate_limit_window in
 * batches: a request is decided at once on what this process knows (the window's total
 * at the last reconciliation, plus what it counted since), with no round trip. At most
 * one reconciliation statement is in flight; everything counted while it runs goes in
 * the next, which starts as soon as it returns (so under load the batches grow, at rest
 * every request is written within a millisecond or two). Each reconciliation returns
 * the totals of every instance, so an instance learns the others' counts at each one.
 *
 * The bound on overshoot (docs/rate-limits.md): with N instances, a window admits at
 * most its limit plus what the other N - 1 instances admitted during one reconciliation
 * round trip each (what an instance admits before it learns the others' counts),
 * and never more than N × the limit.
 */
export class RateCounter {
  private readonly tallies = new Map<string, Tally>();
  private running: Promise<void> | null = null;
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly onError: (err: unknown) => void,
  ) {}

  /**
   * Counts one request of `subject` in `window`; returns its place in the window as far
   * as this process knows. The first request of a window in this process is written at
   * once (one round trip per partner, window and instance), so each instance starts a
   * window from the total of every instance; the others are counted here.
   */
  async count(subject: string, window: number): Promise<number> {
    const key = `${subject} ${window}`;
    const known = this.tallies.get(key);
    if (known) {
      known.pending++;
      this.schedule();
      return known.base + known.sent + known.pending;
    }
    const t: Tally = { subject, window, base: 0, sent: 1, pending: 0 };
    this.tallies.set(key, t);
    try {
      const [row] = await addRateLimitCounts(this.db, [{ subject, window, count: 1 }]);
      t.sent -= 1;
      t.base = Math.max(t.base, row!.count - t.sent);
      return row!.count;
    } catch (err) {
      t.sent -= 1;
      t.pending += 1;
      this.onError(err);
      this.schedule();
      return t.base + t.sent + t.pending;
    }
  }

  /** A window total read elsewhere (a request counted by the database directly). */
  learn(subject: string, window: number, total: number): void {
    const t = this.tallies.get(`${subject} ${window}`);
    if (t) t.base = Math.max(t.base, total - t.sent - t.pending);
  }

  /** Writes what is still counted only here, and stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    await this.running;
    await this.reconcile();
  }

  private schedule(): void {
    if (this.running || this.retry || this.stopped) return;
    this.running = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.loop())
      .finally(() => {
        this.running = null;
      });
  }

  private async loop(): Promise<void> {
    while (!this.stopped && (await this.reconcile())) {
      /* again, with what was counted meanwhile */
    }
  }

  /** One reconciliation statement; true when it wrote something and may have more to do. */
  private async reconcile(): Promise<boolean> {
    const batch: { t: Tally; n: number }[] = [];
    for (const t of this.tallies.values()) {
      if (t.pending === 0) continue;
      batch.push({ t, n: t.pending });
      t.sent += t.pending;
      t.pending = 0;
    }
    if (batch.length === 0) return false;
    try {
      const totals = await addRateLimitCounts(
        this.db,
        batch.map(({ t, n }) => ({ subject: t.subject, window: t.window, count: n })),
      );
      for (const { t, n } of batch) t.sent -= n;
      for (const row of totals) {
        const t = this.tallies.get(`${row.subject} ${Number(row.window_start)}`);
        if (t) t.base = Math.max(t.base, row.count - t.sent);
      }
    } catch (err) {
      for (const { t, n } of batch) {
        t.sent -= n;
        t.pending += n;
      }
      this.onError(err);
      if (!this.stopped) {
        this.retry = setTimeout(() => {
          this.retry = null;
          this.schedule();
        }, 1_000);
        this.retry.unref();
      }
      return false;
    }
    // Windows before the previous one are over: forget them once written.
    const current = rateLimitWindow();
    for (const [key, t] of this.tallies) if (t.window < current - 1 && t.pending === 0 && t.sent === 0) this.tallies.delete(key);
    return true;
  }
}
