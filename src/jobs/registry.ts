import type { AnyQueueDefinition } from './queue.js';
import { partnerPollQueue } from './partner-poll.job.js';
import { partnerPollReconcileQueue } from './partner-poll-reconcile.job.js';
import { webhookDeliveryQueue } from './webhook-delivery.job.js';
import { webhookSweepQueue } from './webhook-sweep.job.js';
import { eventsCleanupQueue } from './events-cleanup.job.js';
import { geocodeQueue } from './geocode.job.js';
import { idempotencyCleanupQueue } from './idempotency-cleanup.job.js';

/** Every queue Lumen runs. Each queue lives in its own <name>.job.ts file. */
export const QUEUES: readonly AnyQueueDefinition[] = [
  partnerPollQueue,
  partnerPollReconcileQueue,
  webhookDeliveryQueue,
  webhookSweepQueue,
  eventsCleanupQueue,
  geocodeQueue,
  idempotencyCleanupQueue,
];
