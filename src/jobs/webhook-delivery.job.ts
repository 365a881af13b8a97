import { defineQueue } from './queue.js';
import { WEBHOOK_DELIVERY_QUEUE, type WebhookDeliveryJob } from '../services/events/index.js';

/**
 * The per-attempt jobs of an earlier release. Deliveries are now claimed straight from
 * webhook_delivery by the delivery worker (webhook-pump.ts); a job still queued, or one
 * sent by an instance of the earlier release during a rolling upgrade, only wakes that
 * worker, which attempts whatever is due, that delivery included.
 */
export const webhookDeliveryQueue = defineQueue<WebhookDeliveryJob>({
  name: WEBHOOK_DELIVERY_QUEUE,
  queue: { retryLimit: 0, expireInSeconds: 60, deleteAfterSeconds: 24 * 3600 },
  work: {
    options: { batchSize: 100 },
    handler: async (deps) => {
      deps.jobs.wakeDeliveries();
    },
  },
});
