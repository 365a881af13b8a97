import type { Job, JobResult, Queue, WorkOptions } from 'pg-boss';
import type { AppDeps } from '../app-deps.js';

/**
 * One queue, declared once: its name, versioned payload, retry/backoff and dead
 * letter, and the worker. Workers must be idempotent: pg-boss delivers at least once.
 */
export interface QueueDefinition<T extends object = object> {
  readonly name: string;
  /** Options for createQueue: retryLimit, retryDelay, retryBackoff, deadLetter, ... */
  readonly queue: Omit<Queue, 'name'>;
  readonly work?: {
    readonly options?: WorkOptions;
    /** Resolves with each job's outcome when the options ask for perJobResults (see drainingWork). */
    readonly handler: (deps: AppDeps, jobs: Job<T>[]) => Promise<void | JobResult[]>;
  };
  /** Cron schedules for this queue (pg-boss keeps one per key across instances). */
  readonly schedules?: readonly { readonly cron: string; readonly data?: T; readonly key?: string }[];
}

/** A queue of any payload, as the registry holds them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyQueueDefinition = QueueDefinition<any>;

export function defineQueue<T extends object>(def: QueueDefinition<T>): QueueDefinition<T> {
  return def;
}

/**
 * Work options of a queue that can build a backlog: batches of `batchSize`, fetched
 * again at once while they come back full. pg-boss 12 waits its polling interval (2 s
 * here) after every fetch unless a notification arrives meanwhile, so with one job per
 * fetch a backlog would drain at one job per 2 s per worker. The handler must settle
 * each job on its own (eachJob): one job failing fails (and retries) only that job.
 */
export function drainingWork(batchSize: number, options: WorkOptions = {}): WorkOptions {
  return { ...options, batchSize, burstWhenBatchFull: true, perJobResults: true };
}

/**
 * Runs `run` for every job of a batch, `concurrency` at a time (default: one after the
 * other), and reports each job's outcome: completed, or failed with what it threw (then
 * retried by its queue's policy).
 */
export async function eachJob<T>(jobs: Job<T>[], run: (job: Job<T>) => Promise<void>, concurrency = 1): Promise<JobResult[]> {
  const results: JobResult[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      try {
        await run(job);
        results.push({ id: job.id, status: 'completed' });
      } catch (err) {
        results.push({ id: job.id, status: 'failed', output: err });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, lane));
  return results;
}
