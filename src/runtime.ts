import type pg from 'pg';
import type { Config } from './config.js';
import { createDatabase, createPool, type Database } from './db/database.js';
import path from 'node:path';
import type { EmbeddedDatabase, EmbeddedSupervisor } from './db/embedded/index.js';
import { migrate } from './db/migrator.js';
import type { Logger } from './lib/logger.js';
import { setOutboundConnectionLimit } from './lib/outbound-http.js';
import { setPasswordCost } from './services/operators/index.js';
import { Jobs } from './jobs/index.js';
import { startHorizonClock, type HorizonClock } from './db/horizon-clock.js';
import { primaryReads, replicaReads, type Reads } from './db/read-replica.js';
import { Metrics } from './metrics/index.js';
import { PartnerKeyCache } from './http/partner-key-cache.js';
import type { AppDeps } from './app-deps.js';

export interface RuntimeOptions {
  /** Apply pending migrations (under the advisory lock). Default true. */
  migrate?: boolean;
  /** Run job workers and schedules here (lumen serve). Default false. */
  work?: boolean;
  /** Pool size. Default 10. */
  poolSize?: number;
  /**
   * Run the pool on the direct URL (LUMEN_DIRECT_DATABASE_URL) instead of DATABASE_URL.
   * CLI commands do: they are few and short, and pole import keeps session state (a
   * temporary table, settings) across transactions. Default false.
   */
  direct?: boolean;
}

export interface Runtime extends AppDeps {
  /** DATABASE_URL (possibly a transaction-pooling PgBouncer), or the embedded database's. */
  readonly databaseUrl: string;
  /** Where session features connect (LUMEN_DIRECT_DATABASE_URL; default databaseUrl). */
  readonly directDatabaseUrl: string;
  readonly embedded: EmbeddedDatabase | null;
  close(): Promise<void>;
}

/**
 * config -> database (DATABASE_URL, or the embedded one under LUMEN_DATA_DIR) ->
 * migrations -> job queue. Shared by `lumen serve` and every CLI command, so both
 * act through the same services on the same data.
 */
export async function openRuntime(config: Config, log: Logger, opts: RuntimeOptions = {}): Promise<Runtime> {
  // Process-wide: every outbound call of this process shares LUMEN_OUTBOUND_CONNECTIONS.
  setOutboundConnectionLimit(config.outboundConnections, config.tenantBudgetShare);
  // Likewise the cost of the password hashes it makes (server and CLI alike).
  setPasswordCost(config.passwordCost);
  let embedded: EmbeddedDatabase | null = null;
  let supervisor: EmbeddedSupervisor | null = null;
  let url: string;
  let directUrl: string;
  if (config.databaseUrl) {
    url = config.databaseUrl;
    directUrl = config.directDatabaseUrl ?? url;
  } else {
    // Loaded only when needed: the embedded PostgreSQL runtime is large.
    const { openEmbeddedDatabase, EmbeddedSupervisor } = await import('./db/embedded/index.js');
    const embeddedLog = (msg: string, fields?: Record<string, unknown>) => log.info(fields ?? {}, msg);
    const open = () => openEmbeddedDatabase({ dataDir: config.dataDir, log: embeddedLog });
    embedded = await open();
    url = embedded.url;
    directUrl = url;
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
  let clock: HorizonClock | null = null;
  let reads: Reads | null = null;
  let partnerKeys: PartnerKeyCache | null = null;
  try {
    // LUMEN_DB_PREPARED=off concerns the pooled DATABASE_URL only (a PgBouncer older than 1.21); direct connections always prepare.
    const viaPooler = !opts.direct && url !== directUrl;
    pool = createPool({ url: opts.direct ? directUrl : url, max: opts.poolSize ?? config.dbPoolSize, prepared: viaPooler ? config.dbPrepared : true });
    pool.on('error', (err) => log.warn({ err }, 'idle database connection failed'));
    if (opts.migrate ?? true) {
      // Migrations hold a session advisory lock across statements: a direct connection.
      const direct = createPool({ url: directUrl, max: 1, applicationName: 'lumen-migrate' });
      try {
        const result = await migrate(direct, (m) => log.info({ migration: m.name }, 'applying migration'));
        if (result.applied.length > 0) log.info({ applied: result.applied.length }, 'migrations applied');
      } finally {
        await direct.end().catch(() => {});
      }
    }
    // pg-boss LISTENs and its workers' wake-ups (channel-listener.ts) too: direct. The
    // jobs' own work and every enqueue run on the pool, in the callers' transactions.
    jobs = await Jobs.start({ url: directUrl, log, work: opts.work ?? false });
    // The city lists' visibility horizon advances with these ticks (0016_visibility_horizon.sql).
    if (opts.work) clock = startHorizonClock(pool, log);
    const finalClock = clock;
    const db: Database = createDatabase(pool);
    // Partner reads on the replica: only where they are served (lumen serve).
    reads = config.readDatabaseUrl && opts.work ? replicaReads({ url: config.readDatabaseUrl, prepared: config.dbPrepared, maxLagMs: config.readMaxLagMs, poolSize: opts.poolSize ?? config.dbPoolSize, primary: db, primaryPool: pool, log }) : primaryReads(db);
    const finalReads = reads;
    // Partner keys from an in-process cache kept true by LISTEN/NOTIFY (a session of its own: direct).
    if (opts.work && config.partnerKeyCache) {
      partnerKeys = new PartnerKeyCache(db, directUrl, log);
      await partnerKeys.start();
    }
    const finalKeys = partnerKeys;
    const metrics = new Metrics({ pool, db, log, embedded: embedded !== null, reads });
    const finalPool = pool;
    const finalJobs = jobs;
    return {
      config,
      log,
      pool: finalPool,
      db,
      reads: finalReads,
      jobs: finalJobs,
      ...(finalKeys ? { partnerKeys: finalKeys } : {}),
      metrics,
      databaseUrl: url,
      directDatabaseUrl: directUrl,
      embedded,
      failure: () => supervisor?.failure ?? null,
      async close() {
        await finalClock?.stop();
        await finalReads.stop();
        await finalKeys?.stop();
        await finalJobs.stop().catch((err: unknown) => log.warn({ err }, 'stopping the job queue failed'));
        await db.destroy().catch(() => {});
        // Kysely ends the pool only if it ran a query itself; the probes and migrations use the pool directly.
        if (!finalPool.ending) await finalPool.end().catch(() => {});
        if (supervisor) await supervisor.stop();
        else if (embedded) await embedded.stop();
      },
    };
  } catch (err) {
    await clock?.stop();
    await reads?.stop();
    await partnerKeys?.stop().catch(() => {});
    await jobs?.stop().catch(() => {});
    await pool?.end().catch(() => {});
    await (supervisor ?? embedded)?.stop().catch(() => {});
    throw err;
  }
}
