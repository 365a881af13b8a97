import type { Job, Queue, WorkOptions } from 'pg-boss';
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
    readonly handler: (deps: AppDeps, jobs: Job<T>[]) => Promise<void>;
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
