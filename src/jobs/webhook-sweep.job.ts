import { defineQueue } from './queue.js';
import { sweepStrandedDeliveries } from '../services/events/index.js';
import { dropExpiredWebhookSecrets } from '../services/partners/index.js';

/**
 * Every minute: webhook deliveries that nothing would start otherwise are started again
 * (see sweepStrandedDeliveries), and replaced webhook secrets past their overlap are
 * forgotten (they stopped signing at the end of it already: the claim reads them only
 * until then).
 */
export const webhookSweepQueue = defineQueue<{ v: 1 }>({
  name: 'webhook-sweep',
  queue: { policy: 'singleton', retryLimit: 0, expireInSeconds: 300, deleteAfterSeconds: 3600 },
  work: {
    handler: async (deps) => {
      await sweepStrandedDeliveries(deps);
      await dropExpiredWebhookSecrets(deps.db);
    },
  },
  schedules: [{ cron: '* * * * *', data: { v: 1 }, key: 'webhook-sweep' }],
});
