import type pg from 'pg';
import type { Config } from './config.js';
import { createDatabase, createPool, type Database } from './db/database.js';
import type { EmbeddedDatabase } from './db/embedded.js';
import { migrate } from './db/migrator.js';
import type { Logger } from './lib/logger.js';
import { Jobs } from './jobs/index.js';
import { startHorizonClock, type HorizonClock } from './db/horizon-clock.js';
import type { AppDeps } from './app-deps.js';

export interface RuntimeOptions {
  /** Apply pending migrations (under the advisory lock). Default true. */
  migrate?: boolean;
  /** Run job workers and schedules here (lumen serve). Default false. */
  work?: boolean;
  /** Pool size. Default 10. */
  poolSize?: number;
}

export interface Runtime extends AppDeps {
  readonly databaseUrl: string;
  readonly embedded: EmbeddedDatabase | null;
  close(): Promise<void>;
}

/**
 * config -> database (DATABASE_URL, or the embedded one under LUMEN_DATA_DIR) ->
 * migrations -> job queue. Shared by `lumen serve` and every CLI command, so both
 * act through the same services on the same data.
 */
export async function openRuntime(config: Config, log: Logger, opts: RuntimeOptions = {}): Promise<Runtime> {
  let embedded: EmbeddedDatabase | null = null;
  let url: string;
  if (config.databaseUrl) {
    url = config.databaseUrl;
  } else {
    // Loaded only when needed: the embedded PostgreSQL runtime is large.
    const { openEmbeddedDatabase } = await import('./db/embedded.js');
    embedded = await openEmbeddedDatabase({ dataDir: config.dataDir, log: (msg: string, fields?: Record<string, unknown>) => log.info(fields ?? {}, msg) });
    url = embedded.url;
  }
  let pool: pg.Pool | null = null;
  let jobs: Jobs | null = null;
  let clock: HorizonClock | null = null;
  try {
    pool = createPool({ url, max: opts.poolSize ?? 10 });
    pool.on('error', (err) => log.warn({ err }, 'idle database connection failed'));
    if (opts.migrate ?? true) {
      const result = await migrate(pool, (m) => log.info({ migration: m.name }, 'applying migration'));
      if (result.applied.length > 0) log.info({ applied: result.applied.length }, 'migrations applied');
    }
    jobs = await Jobs.start({ url, log, work: opts.work ?? false });
    // The city lists' visibility horizon advances with these ticks (0016_visibility_horizon.sql).
    if (opts.work) clock = startHorizonClock(pool, log);
    const finalClock = clock;
    const db: Database = createDatabase(pool);
    const finalPool = pool;
    const finalJobs = jobs;
    return {
      config,
      log,
      pool: finalPool,
      db,
      jobs: finalJobs,
      databaseUrl: url,
      embedded,
      async close() {
        await finalClock?.stop();
        await finalJobs.stop().catch((err: unknown) => log.warn({ err }, 'stopping the job queue failed'));
        await db.destroy().catch(() => {});
        // Kysely ends the pool only if it ran a query itself; the probes and migrations use the pool directly.
        if (!finalPool.ending) await finalPool.end().catch(() => {});
        if (embedded) await embedded.stop();
      },
    };
  } catch (err) {
    await clock?.stop();
    await jobs?.stop().catch(() => {});
    await pool?.end().catch(() => {});
    await embedded?.stop().catch(() => {});
    throw err;
  }
}
