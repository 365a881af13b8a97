import type pg from 'pg';
import type { PgBoss, SendOptions } from 'pg-boss';
import type { Config } from '../config.js';
import type { Database, Executor } from '../db/database.js';
import type { Reads } from '../db/read-replica.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../metrics/index.js';

/** What every service needs; built once in main and passed down (no globals). */
export interface ServiceDeps {
  readonly config: Config;
  readonly db: Database;
  /** Where partner reads run: the replica of LUMEN_READ_DATABASE_URL while usable, else `db`. Writes always go to `db`. */
  readonly reads: Reads;
  readonly log: Logger;
}

/**
 * The job queue as services see it: a port that AppDeps provides (src/jobs implements
 * it). Services enqueue through it inside their own transaction and never import src/jobs,
 * so data flows downhill: jobs → services → db.
 */
export interface JobPort {
  /** Enqueue a job in the caller's transaction (it exists exactly when that commits). */
  send(executor: Executor, queue: string, data: object, options?: SendOptions): Promise<string | null>;
  /** Enqueue the background geocoding of an alert in the caller's transaction. */
  enqueueGeocode(executor: Executor, alertId: string, config: Pick<Config, 'geocodeRetryDelaySeconds'>): Promise<void>;
  /** pg-boss itself, for the partner poll's hand-over of its singleton job. */
  readonly boss: Pick<PgBoss, 'complete' | 'findJobs' | 'update'>;
}

/** ServiceDeps plus the ports of the running process: what the background services and intake need. */
export interface RuntimeDeps extends ServiceDeps {
  readonly pool: pg.Pool;
  readonly jobs: JobPort;
  /** Prometheus metrics of this process (src/metrics). */
  readonly metrics: Metrics;
}
