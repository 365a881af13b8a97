import type { AnyQueueDefinition } from './queue.js';
import { partnerPollQueue } from './partner-poll.job.js';
import { partnerPollReconcileQueue } from './partner-poll-reconcile.job.js';
import { webhookSweepQueue } from './webhook-sweep.job.js';
import { eventsCleanupQueue } from './events-cleanup.job.js';
import { geocodeQueue } from './geocode.job.js';
import { idempotencyCleanupQueue } from './idempotency-cleanup.job.js';
import { telemetryLampOutQueue } from './telemetry-lamp-out.job.js';
import { cityReadCleanupQueue } from './city-read-cleanup.job.js';

/** Every queue Lumen runs. Each queue lives in its own <name>.job.ts file. */
export const QUEUES: readonly AnyQueueDefinition[] = [
  partnerPollQueue,
  partnerPollReconcileQueue,
  webhookSweepQueue,
  eventsCleanupQueue,
  geocodeQueue,
  idempotencyCleanupQueue,
  telemetryLampOutQueue,
  cityReadCleanupQueue,
];

/**
 * Queues of earlier releases, deleted (with any jobs left in them) when the queues are
 * created at start. `webhook-delivery` held one job per attempt before webhook_delivery
 * became the queue itself (migration 0012); its jobs only woke the delivery worker,
 * whose own poll finds every due delivery.
 */
export const RETIRED_QUEUES: readonly string[] = ['webhook-delivery'];
