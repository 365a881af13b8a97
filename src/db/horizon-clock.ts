import type pg from 'pg';
import type { Logger } from '../lib/logger.js';

/** How often a tick is written. The city lists' horizon lags a running writer by about this much more. */
export const TICK_INTERVAL_MS = 100;

/**
 * One tick of lumen_xid_clock (0016_visibility_horizon.sql): a clock reading taken
 * before this statement's transaction gets its id (the subquery is evaluated first),
 * so every transaction with a greater id stamps later. Ticks older than ten minutes
 * are dropped, except the newest one below the oldest running transaction, which the
 * horizon may still need.
 */
export const TICK_SQL = `WITH tick AS (
  INSERT INTO lumen_xid_clock (xid, at)
  -- A tick lost in a crash is harmless (its id then never committed): no WAL flush wait.
  SELECT pg_current_xact_id(), c FROM (SELECT clock_timestamp() AS c, set_config('synchronous_commit', 'off', true) AS async_commit OFFSET 0) s
  RETURNING xid)
DELETE FROM lumen_xid_clock
 WHERE at < now() - interval '10 minutes'
   AND xid < (SELECT xid FROM lumen_xid_clock WHERE xid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY xid DESC LIMIT 1)`;

export interface HorizonClock {
  stop(): Promise<void>;
}

/**
 * Writes a tick every TICK_INTERVAL_MS while `lumen serve` runs (every instance does;
 * more ticks only make the horizon fresher). One autocommit statement, so it works
 * through a transaction-pooling PgBouncer.
 */
export function startHorizonClock(pool: pg.Pool, log: Logger): HorizonClock {
  let running: Promise<void> | null = null;
  let failing = false;
  const tick = () => {
    if (running) return;
    running = pool
      .query(TICK_SQL)
      .then(() => {
        failing = false;
      })
      .catch((err: unknown) => {
        if (!failing) log.warn({ err }, 'writing a visibility horizon tick failed');
        failing = true;
      })
      .finally(() => {
        running = null;
      });
  };
  tick();
  const timer = setInterval(tick, TICK_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
