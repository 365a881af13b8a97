import type pg from 'pg';
import type { Logger } from '../lib/logger.js';

/** How often a tick is written. The city lists' horizon lags a running writer by about this much more. */
export const TICK_INTERVAL_MS = 100;

/** Every this many ticks (about 10 s), old ticks are dropped as well. */
export const PRUNE_EVERY_TICKS = 100;

/**
 * One tick of lumen_xid_clock (0016_visibility_horizon.sql): a clock reading taken
 * before this statement's transaction gets its id (the subquery is evaluated first),
 * so every transaction with a greater id stamps later. A tick lost in a crash is
 * harmless (its id then never committed), so it does not wait for the WAL flush.
 */
export const TICK_SQL = `INSERT INTO lumen_xid_clock (xid, at)
SELECT pg_current_xact_id(), c FROM (SELECT clock_timestamp() AS c, set_config('synchronous_commit', 'off', true) AS async_commit OFFSET 0) s`;

/**
 * A tick, and ticks older than ten minutes dropped, except the newest one below the
 * oldest running transaction, which the horizon may still need (a standby a few
 * minutes behind may need older ones: ten minutes of them are kept).
 */
export const TICK_AND_PRUNE_SQL = `WITH tick AS (${TICK_SQL} RETURNING xid)
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
  let ticks = 0;
  const tick = () => {
    if (running) return;
    running = pool
      .query(ticks++ % PRUNE_EVERY_TICKS === 0 ? TICK_AND_PRUNE_SQL : TICK_SQL)
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
