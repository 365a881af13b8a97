import { deleteIdempotencyKeysOlderThan } from '../db/repositories/intake/idempotency.repository.js';
import { defineQueue } from './queue.js';

/** Hourly: Idempotency-Keys past the retention (LUMEN_IDEMPOTENCY_RETENTION_DAYS, at least 7) are removed. */
export const idempotencyCleanupQueue = defineQueue<{ v: 1 }>({
  name: 'idempotency-key-cleanup',
  queue: { policy: 'singleton', retryLimit: 3, retryDelay: 60, expireInSeconds: 3600, deleteAfterSeconds: 7 * 24 * 3600 },
  work: {
    handler: async (deps) => {
      const deleted = await deleteIdempotencyKeysOlderThan(deps.db, deps.config.idempotencyRetentionDays);
      if (deleted > 0) deps.log.info({ deleted, retentionDays: deps.config.idempotencyRetentionDays }, 'expired idempotency keys removed');
    },
  },
  schedules: [{ cron: '17 * * * *', data: { v: 1 }, key: 'idempotency-key-cleanup' }],
});
