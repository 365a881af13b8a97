import type pg from 'pg';
import type { Config } from './config.js';
import { createDatabase, createPool, type Database } from './db/database.js';
import path from 'node:path';
import type { EmbeddedDatabase, EmbeddedSupervisor } from './db/embedded/index.js';
import { migrate } from './db/migrator.js';
import type { Logger } from './lib/logger.js';
import { Jobs } from './jobs/index.js';
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
  let supervisor: EmbeddedSupervisor | null = null;
  let url: string;
  if (config.databaseUrl) {
    url = config.databaseUrl;
  } else {
    // Loaded only when needed: the embedded PostgreSQL runtime is large.
    const { openEmbeddedDatabase, EmbeddedSupervisor } = await import('./db/embedded/index.js');
    const embeddedLog = (msg: string, fields?: Record<string, unknown>) => log.info(fields ?? {}, msg);
    const open = () => openEmbeddedDatabase({ dataDir: config.dataDir, log: embeddedLog });
    embedded = await open();
    url = embedded.url;
    // lumen serve watches the server it owns and starts it again if it dies.
    if (opts.work && embedded.owned) {
      supervisor = new EmbeddedSupervisor(embedded, {
        dataDir: config.dataDir,
        clusterDir: path.join(config.dataDir, 'postgres'),
        log: (msg, fields) => (/gone|failed/.test(msg) ? log.error(fields ?? {}, msg) : log.info(fields ?? {}, msg)),
        attempts: config.embeddedRestartAttempts,
        firstDelayMs: config.embeddedRestartDelayMs,
        reopen: open,
      });
    }
  }
  let pool: pg.Pool | null = null;
  let jobs: Jobs | null = null;
  try {
    pool = createPool({ url, max: opts.poolSize ?? 10 });
    pool.on('error', (err) => log.warn({ err }, 'idle database connection failed'));
    if (opts.migrate ?? true) {
      const result = await migrate(pool, (m) => log.info({ migration: m.name }, 'applying migration'));
      if (result.applied.length > 0) log.info({ applied: result.applied.length }, 'migrations applied');
    }
    jobs = await Jobs.start({ url, log, work: opts.work ?? false });
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
      failure: () => supervisor?.failure ?? null,
      async close() {
        await finalJobs.stop().catch((err: unknown) => log.warn({ err }, 'stopping the job queue failed'));
        await db.destroy().catch(() => {});
        // Kysely ends the pool only if it ran a query itself; the probes and migrations use the pool directly.
        if (!finalPool.ending) await finalPool.end().catch(() => {});
        if (supervisor) await supervisor.stop();
        else if (embedded) await embedded.stop();
      },
    };
  } catch (err) {
    await jobs?.stop().catch(() => {});
    await pool?.end().catch(() => {});
    await (supervisor ?? embedded)?.stop().catch(() => {});
    throw err;
  }
}
