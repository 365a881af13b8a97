import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../db/database.js';
import type { Reads } from '../db/read-replica.js';
import { eventsWaiting, oldestDueDeliveryAge, oldestDueJobAge, partnerPollLag, queueDepths } from '../db/repositories/metrics.repository.js';
import type { Logger } from '../lib/logger.js';

export type WebhookOutcome = 'succeeded' | 'retrying' | 'failed';
export type TelemetryOutcome = 'applied' | 'stale' | 'unknown' | 'rejected';

export interface MetricsSources {
  readonly pool: pg.Pool;
  readonly db: Database;
  readonly log: Logger;
  /** Whether the database is the embedded one (lumen_embedded_postgres_up is exported then). */
  readonly embedded: boolean;
  /** Where partner reads run (the replica gauges are exported when one is configured). */
  readonly reads?: Reads;
}

/**
 * Prometheus metrics of one Lumen process, in a registry of its own (several
 * instances may share a process in tests). Counters and histograms count this
 * process's work; the gauges read from the database at each scrape describe the
 * shared state (queues, deliveries, events) and are the same on every instance.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'operation' | 'status'>;
  private readonly httpDuration: Histogram<'operation' | 'status'>;
  private readonly poolWait: Histogram;
  private readonly webhookDeliveries: Counter<'partner' | 'outcome'>;
  private readonly poolConnections: Gauge<'state'>;
  private readonly queueJobs: Gauge<'queue' | 'state'>;
  private readonly queueOldest: Gauge<'queue'>;
  private readonly pollLag: Gauge<'partner'>;
  private readonly telemetryReports: Counter<'outcome'>;
  private readonly webhookOldestDue: Gauge<'partner'>;
  private readonly eventsWaiting: Gauge<'partner'>;
  private readonly databaseUp: Gauge;
  private readonly embeddedUp: Gauge | null;

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'lumen_' });
    this.httpRequests = new Counter({ name: 'lumen_http_requests_total', help: 'HTTP requests answered, by OpenAPI operationId (or route) and status', labelNames: ['operation', 'status'], registers });
    this.httpDuration = new Histogram({
      name: 'lumen_http_request_duration_seconds',
      help: 'Time from a request arriving to its answer being written, by operationId and status',
      labelNames: ['operation', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.poolWait = new Histogram({ name: 'lumen_db_pool_wait_seconds', help: 'Time waited for a connection of the database pool', buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10], registers });
    this.poolConnections = new Gauge({
      name: 'lumen_db_pool_connections',
      help: 'Connections of the database pool: total, idle, and requests waiting for one',
      labelNames: ['state'],
      registers,
      collect: () => {
        const { pool } = this.sources;
        this.poolConnections.set({ state: 'total' }, pool.totalCount);
        this.poolConnections.set({ state: 'idle' }, pool.idleCount);
        this.poolConnections.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
    this.webhookDeliveries = new Counter({ name: 'lumen_webhook_deliveries_total', help: 'Webhook delivery attempts made by this process, by partner and outcome (succeeded, retrying, failed: no more attempts)', labelNames: ['partner', 'outcome'], registers });
    this.queueJobs = new Gauge({ name: 'lumen_job_queue_jobs', help: 'Jobs per queue and state (created, retry: waiting; active: running)', labelNames: ['queue', 'state'], registers });
    this.queueOldest = new Gauge({ name: 'lumen_job_queue_oldest_due_seconds', help: "Age of the queue's oldest waiting job that is due (0: none)", labelNames: ['queue'], registers });
    this.pollLag = new Gauge({ name: 'lumen_partner_poll_lag_seconds', help: 'Seconds since Lumen last held everything a polled partner had (its last poll that ended with hasMore false)', labelNames: ['partner'], registers });
    this.telemetryReports = new Counter({ name: 'lumen_telemetry_reports_total', help: 'Telemetry reports received by this process over HTTP, by outcome (applied, stale, unknown device, rejected)', labelNames: ['outcome'], registers });
    this.webhookOldestDue = new Gauge({ name: 'lumen_webhook_oldest_due_seconds', help: "Age of the partner's oldest webhook delivery that is due and not done (0: none)", labelNames: ['partner'], registers });
    this.eventsWaiting = new Gauge({ name: 'lumen_events_waiting', help: 'Events a polling partner has not confirmed yet', labelNames: ['partner'], registers });
    this.databaseUp = new Gauge({ name: 'lumen_database_up', help: 'Whether the database answered the last scrape (1) or not (0)', registers });
    this.embeddedUp = sources.embedded ? new Gauge({ name: 'lumen_embedded_postgres_up', help: 'Whether the embedded PostgreSQL answered the last scrape (1) or not (0)', registers }) : null;
    const reads = sources.reads;
    if (reads?.configured) {
      const inUse: Gauge = new Gauge({ name: 'lumen_read_replica_in_use', help: 'Whether partner reads run on the replica (1) or on the primary (0)', registers, collect: () => void inUse.set(reads.status().state === 'in-use' ? 1 : 0) });
      const lag: Gauge = new Gauge({
        name: 'lumen_read_replica_lag_seconds',
        help: "How far the replica was behind the primary at its last check (absent while unknown)",
        registers,
        collect: () => {
          lag.reset();
          const s = reads.status().lagSeconds;
          if (s !== null) lag.set(s);
        },
      });
    }
    this.instrumentPool();
  }

  observeRequest(operation: string, status: number, seconds: number): void {
    const labels = { operation, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  webhookAttempt(partner: string, outcome: WebhookOutcome): void {
    this.webhookDeliveries.inc({ partner, outcome });
  }

  telemetry(counts: Readonly<Record<TelemetryOutcome, number>>): void {
    for (const [outcome, n] of Object.entries(counts)) if (n > 0) this.telemetryReports.inc({ outcome }, n);
  }

  /** The exposition text, after reading the database's gauges. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    await this.readDatabase();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private async readDatabase(): Promise<void> {
    const { db, log } = this.sources;
    let up = 1;
    try {
      const [queues, oldest, due, waiting, lag] = await Promise.all([queueDepths(db), oldestDueJobAge(db), oldestDueDeliveryAge(db), eventsWaiting(db), partnerPollLag(db)]);
      // Reset first: a deleted partner or queue leaves no stale series behind.
      this.queueJobs.reset();
      for (const r of queues) this.queueJobs.set({ queue: r.queue, state: r.state }, r.n);
      this.queueOldest.reset();
      for (const r of oldest) this.queueOldest.set({ queue: r.queue }, r.value);
      this.pollLag.reset();
      for (const r of lag) this.pollLag.set({ partner: r.partner }, r.value);
      this.webhookOldestDue.reset();
      for (const r of due) this.webhookOldestDue.set({ partner: r.partner }, r.value);
      this.eventsWaiting.reset();
      for (const r of waiting) this.eventsWaiting.set({ partner: r.partner }, r.value);
    } catch (err) {
      up = 0;
      log.warn({ err }, 'reading the database for /metrics failed');
    }
    this.databaseUp.set(up);
    this.embeddedUp?.set(up);
  }

  /** Times every checkout of the pool (pool.query checks out through connect as well). */
  private instrumentPool(): void {
    const pool = this.sources.pool;
    const connect = pool.connect.bind(pool) as (cb?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void) => unknown;
    const wait = this.poolWait;
    (pool as { connect: unknown }).connect = (cb?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void) => {
      const end = wait.startTimer();
      if (cb) {
        return connect((err, client, done) => {
          end();
          cb(err, client, done);
        });
      }
      return (connect() as Promise<pg.PoolClient>).then(
        (client) => {
          end();
          return client;
        },
        (err: unknown) => {
          end();
          throw err;
        },
      );
    };
  }
}
