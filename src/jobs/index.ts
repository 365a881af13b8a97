import { PgBoss, fromKysely, type SendOptions } from 'pg-boss';
import type { Executor } from '../db/database.js';
import type { Logger } from '../lib/logger.js';
import type { AppDeps } from '../app-deps.js';
import type { Config } from '../config.js';
import type { JobPort } from '../services/deps.js';
import { enqueueGeocode } from './geocode.job.js';
import type { AnyQueueDefinition } from './queue.js';
import { QUEUES, RETIRED_QUEUES } from './registry.js';
import { WebhookPump, type WebhookPumpState } from './webhook-pump.js';

export interface JobsOptions {
  url: string;
  log: Logger;
  /** Run workers and schedules in this process. Default true (the CLI only enqueues). */
  work?: boolean;
  queues?: readonly AnyQueueDefinition[];
}

/**
 * pg-boss inside Lumen's own Postgres. LISTEN/NOTIFY wakes workers the moment a job
 * is committed; the short backstop poll finds retries and anything a missed
 * notification left behind.
 */
export class Jobs implements JobPort {
  /** The webhook delivery worker (lumen serve only; see webhook-pump.ts). */
  private deliveries: WebhookPump | null = null;

  private constructor(readonly boss: PgBoss, private readonly log: Logger, private readonly queues: readonly AnyQueueDefinition[], private readonly url: string) {}

  static async start(opts: JobsOptions): Promise<Jobs> {
    const work = opts.work ?? true;
    const boss = new PgBoss({
      connectionString: opts.url,
      schema: 'pgboss',
      max: 4,
      application_name: 'lumen-jobs',
      useListenNotify: work,
      supervise: work,
      schedule: work,
    });
    boss.on('error', (err) => opts.log.error({ err }, 'job queue error'));
    await boss.start();
    const queues = opts.queues ?? QUEUES;
    for (const q of queues) {
      await boss.createQueue(q.name, { notify: true, ...q.queue });
    }
    if (!opts.queues) {
      for (const name of RETIRED_QUEUES) {
        if (await boss.getQueue(name)) await boss.deleteQueue(name);
      }
    }
    return new Jobs(boss, opts.log, queues, opts.url);
  }

  /** Starts the workers and schedules of every queue (lumen serve only). */
  async startWorkers(deps: AppDeps): Promise<void> {
    for (const q of this.queues) {
      if (q.work) {
        const handler = q.work.handler;
        await this.boss.work(q.name, { notifyPollingIntervalSeconds: 2, pollingIntervalSeconds: 2, ...q.work.options }, async (jobs) => handler(deps, jobs as never));
      }
      for (const s of q.schedules ?? []) {
        await this.boss.schedule(q.name, s.cron, (s.data ?? null) as object | null, s.key ? { key: s.key } : undefined);
      }
    }
    this.deliveries = await WebhookPump.start(deps, { url: this.url, pollMs: deps.config.webhookPollMs });
  }

  /** This process's webhook delivery worker's permits and attempts per partner (null outside lumen serve). */
  deliveryState(): WebhookPumpState | null {
    return this.deliveries?.state() ?? null;
  }

  /** Makes this process's webhook delivery worker look for due deliveries now (none outside lumen serve). */
  wakeDeliveries(): void {
    this.deliveries?.wake();
  }

  /**
   * Enqueue inside the caller's transaction: the job exists exactly when the write
   * that caused it commits.
   */
  async send(executor: Executor, queue: string, data: object, options: SendOptions = {}): Promise<string | null> {
    return this.boss.send(queue, data, { ...options, db: fromKysely(executor as never) });
  }

  /** JobPort: the background geocoding of an alert, in the caller's transaction (see geocode.job.ts). */
  async enqueueGeocode(executor: Executor, alertId: string, config: Pick<Config, 'geocodeRetryDelaySeconds'>): Promise<void> {
    await enqueueGeocode(this, executor, alertId, config);
  }

  async stop(): Promise<void> {
    await this.deliveries?.stop();
    await this.boss.stop({ graceful: true, timeout: 10_000, close: true });
    this.log.debug('job queue stopped');
  }
}
