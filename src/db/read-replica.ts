import type pg from 'pg';
import { createDatabase, createPool, type Database } from './database.js';
import { AppError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';

/**
 * Partner reads on a streaming replica (LUMEN_READ_DATABASE_URL).
 *
 * A read runs on the replica while it is usable, otherwise on the primary: when it is
 * further behind than LUMEN_READ_MAX_LAG, unreachable, or not a physical replica of
 * this primary (another cluster's transaction ids would make the visibility horizon
 * meaningless). A read that fails on the replica for any reason but a refusal of the
 * request itself (an AppError) runs again on the primary at once, and the replica is
 * checked again: a replica that goes away costs no request.
 *
 * Reads are correct on either side, and when successive reads of one partner move
 * from one to the other: each statement's horizon is computed from what its own
 * server has replayed (0030_standby_horizon.sql), and a partner's cursor only ever
 * stands below a horizon it was handed. Writes a read needs (walk checkpoints, event
 * positions and confirmations) stay on the primary, whatever the replica's lag.
 *
 * The lag is measured on Lumen's own clock ticks (src/db/horizon-clock.ts), written on
 * the primary every 100 ms by every `lumen serve`: the primary's time now minus the
 * newest tick the replica has replayed. An idle primary therefore shows no false lag,
 * and a replica whose WAL receiver stalled shows its true one.
 */

export type ReplicaState = 'in-use' | 'lagging' | 'unreachable' | 'not-a-replica' | 'starting';

export interface ReplicaStatus {
  readonly state: ReplicaState;
  /** Seconds behind the primary at the last check; null when unknown. */
  readonly lagSeconds: number | null;
  /** When the replica was last checked (ISO), null before the first check. */
  readonly checkedAt: string | null;
}

export interface Reads {
  /** Whether a replica is configured at all. */
  readonly configured: boolean;
  /**
   * Runs `read` on the replica when it is usable, else (and again after a replica
   * failure) on the primary. `read` must only read: it may run twice. `onReplica`
   * says where this run reads.
   */
  run<T>(read: (db: Database, onReplica: boolean) => Promise<T>): Promise<T>;
  status(): ReplicaStatus;
  /** Checks the replica now (also done every interval). */
  check(): Promise<ReplicaStatus>;
  stop(): Promise<void>;
}

/** Every read on the primary: no replica configured. */
export function primaryReads(db: Database): Reads {
  const status: ReplicaStatus = { state: 'unreachable', lagSeconds: null, checkedAt: null };
  return {
    configured: false,
    run: (read) => read(db, false),
    status: () => status,
    check: () => Promise.resolve(status),
    stop: () => Promise.resolve(),
  };
}

export interface ReplicaReadsOptions {
  readonly url: string;
  readonly maxLagMs: number;
  readonly poolSize: number;
  readonly primary: Database;
  readonly primaryPool: pg.Pool;
  readonly log: Logger;
  /** Named prepared statements on the replica's connections (LUMEN_DB_PREPARED). Default true. */
  readonly prepared?: boolean;
  /** How often the replica is checked. Default: every second, or a quarter of maxLagMs when that is shorter. */
  readonly checkIntervalMs?: number;
}

const NEWEST_TICK = `SELECT pg_is_in_recovery() AS standby,
  (SELECT system_identifier::text FROM pg_control_system()) AS system,
  (SELECT at FROM lumen_xid_clock ORDER BY xid DESC LIMIT 1) AS newest`;
const PRIMARY_NOW = `SELECT clock_timestamp() AS now, (SELECT system_identifier::text FROM pg_control_system()) AS system`;

export function replicaReads(opts: ReplicaReadsOptions): Reads {
  // A replica that does not answer must not hold requests for long before they go to the primary.
  const pool = createPool({ url: opts.url, max: opts.poolSize, applicationName: 'lumen-read', connectionTimeoutMillis: 2_000, prepared: opts.prepared ?? true });
  pool.on('error', (err) => opts.log.warn({ err }, 'idle replica connection failed'));
  const replica = createDatabase(pool);
  const interval = opts.checkIntervalMs ?? Math.max(100, Math.min(1_000, Math.floor(opts.maxLagMs / 4)));
  let status: ReplicaStatus = { state: 'starting', lagSeconds: null, checkedAt: null };
  let checking: Promise<ReplicaStatus> | null = null;
  let stopped = false;

  const set = (next: ReplicaStatus, cause?: unknown) => {
    if (next.state !== status.state) {
      const fields = { replica: next.state, lagSeconds: next.lagSeconds, err: cause };
      if (next.state === 'in-use') opts.log.info(fields, 'partner reads on the replica');
      else opts.log.warn(fields, 'partner reads on the primary: the replica is not usable');
    }
    status = next;
    return next;
  };

  const measure = async (): Promise<ReplicaStatus> => {
    const checkedAt = new Date().toISOString();
    let r: { standby: boolean; system: string | null; newest: Date | null };
    try {
      r = (await pool.query<{ standby: boolean; system: string | null; newest: Date | null }>(NEWEST_TICK)).rows[0]!;
    } catch (err) {
      return set({ state: 'unreachable', lagSeconds: null, checkedAt }, err);
    }
    const p = (await opts.primaryPool.query<{ now: Date; system: string | null }>(PRIMARY_NOW)).rows[0]!;
    if (r.system !== null && p.system !== null && r.system !== p.system) return set({ state: 'not-a-replica', lagSeconds: null, checkedAt });
    // No tick replayed yet (a fresh database): as far behind as can be.
    const lagSeconds = r.newest === null ? null : Math.max(0, (p.now.getTime() - r.newest.getTime()) / 1000);
    const usable = lagSeconds !== null && lagSeconds * 1000 <= opts.maxLagMs;
    return set({ state: usable ? 'in-use' : 'lagging', lagSeconds, checkedAt });
  };

  const check = () =>
    (checking ??= measure()
      .catch((err: unknown) => {
        // The primary did not answer: nothing to compare with; the reads fail on their own.
        opts.log.warn({ err }, 'checking the read replica failed');
        return status;
      })
      .finally(() => {
        checking = null;
      }));

  void check();
  const timer = setInterval(() => void check(), interval);
  timer.unref();

  return {
    configured: true,
    async run(read) {
      if (status.state !== 'in-use' || stopped) return read(opts.primary, false);
      try {
        return await read(replica, true);
      } catch (err) {
        if (err instanceof AppError) throw err;
        // A replica going away, a query cancelled by recovery (a conflict with replay): the primary answers.
        opts.log.warn({ err }, 'a read failed on the replica: read again on the primary');
        set({ ...status, state: 'unreachable' }, err);
        void check();
        return read(opts.primary, false);
      }
    },
    status: () => status,
    check,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await checking;
      await replica.destroy().catch(() => {});
      if (!pool.ending) await pool.end().catch(() => {});
    },
  };
}
