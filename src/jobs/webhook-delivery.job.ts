import { defineQueue } from './queue.js';
import { attemptDelivery } from '../services/events-delivery.js';
import { WEBHOOK_DELIVERY_QUEUE, type WebhookDeliveryJob } from '../services/events-dispatch.js';

/**
 * One webhook attempt per job (N6). The retry schedule, Retry-After, per-order
 * ordering and the dead state live in webhook_delivery, not in pg-boss: a failed
 * attempt is recorded and its next attempt enqueued with startAfter, and the job
 * itself completes. pg-boss retries only cover a run that died (shutdown, crash,
 * database outage); the delivery's lease makes a repeated job harmless.
 */
export const webhookDeliveryQueue = defineQueue<WebhookDeliveryJob>({
  name: WEBHOOK_DELIVERY_QUEUE,
  queue: {
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    retryDelayMax: 120,
    // an attempt takes at most the 10 s HTTP timeout plus two short transactions
    expireInSeconds: 120,
    deleteAfterSeconds: 24 * 3600,
  },
  work: {
    // Batches of 8, fetched again at once while full: with one job per fetch, pg-boss
    // waits its polling interval between fetches and a backlog drains at a few events/s.
    // The attempts of a batch run concurrently; ordering per service order is kept by
    // the delivery claim, not by job order.
    options: { batchSize: 8, localConcurrency: 8, burstWhenBatchFull: true },
    handler: async (deps, jobs) => {
      const outcomes = await Promise.allSettled(
        jobs.map(async (job) => {
          if (job.data?.v === 1) await attemptDelivery(deps, job.data.deliveryId, job.signal);
          else deps.log.warn({ jobId: job.id, data: job.data }, 'webhook-delivery job with an unknown payload version ignored');
        }),
      );
      // A run that died is retried as a batch; each delivery's lease makes the repeat harmless.
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    },
  },
});
