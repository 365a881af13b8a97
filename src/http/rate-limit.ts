import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { AppError } from '../lib/errors.js';

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
