import type { Executor } from '../db/database.js';
import type { Jobs } from '../jobs/index.js';
import { jobsOf } from '../jobs/transaction-jobs.js';

/** The queue whose jobs make webhook attempts; one job names one delivery. */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';

/** Payload of a webhook-delivery job (versioned: a worker may see jobs of an older release). */
export interface WebhookDeliveryJob {
  readonly v: 1;
  readonly deliveryId: string;
}

/**
 * Enqueues an attempt of a delivery in the caller's transaction, to run at once or at
 * `startAfter`. Duplicate jobs are harmless: an attempt runs only when the delivery is
 * due, unleased and first in its order (see events-delivery.ts). Returns false when the
 * executor carries no job queue; the sweeper then starts the delivery.
 */
export async function enqueueDelivery(executor: Executor, deliveryId: string, startAfter?: Date): Promise<boolean> {
  const jobs = jobsOf(executor);
  if (!jobs) return false;
  const data: WebhookDeliveryJob = { v: 1, deliveryId };
  await jobs.send(executor, WEBHOOK_DELIVERY_QUEUE, data, startAfter && startAfter.getTime() > Date.now() ? { startAfter } : {});
  return true;
}

/**
 * pg-boss wakes workers by NOTIFY only for jobs that are runnable when they commit; a
 * retry due later would wait for the backstop poll. For near retries this process
 * wakes its own delivery workers when the retry falls due (another instance's poll
 * still finds it if this one stops first).
 */
export function wakeDeliveryWorkersAt(jobs: Jobs, at: Date): void {
  const delay = at.getTime() - Date.now();
  if (delay > NEAR_RETRY_MS) return;
  const timer = setTimeout(() => {
    for (const worker of jobs.boss.getWipData()) {
      if (worker.name === WEBHOOK_DELIVERY_QUEUE) jobs.boss.notifyWorker(worker.id);
    }
  }, Math.max(0, delay) + 5);
  timer.unref();
}

/** Retries further away than this rely on the queue's own polling (a few seconds late at most). */
const NEAR_RETRY_MS = 10 * 60_000;
