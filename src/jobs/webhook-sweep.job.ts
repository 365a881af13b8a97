import { defineQueue } from './queue.js';
import { sweepStrandedDeliveries } from '../services/events/index.js';

/** Every minute: webhook deliveries that nothing would start otherwise are started again (see sweepStrandedDeliveries). */
export const webhookSweepQueue = defineQueue<{ v: 1 }>({
  name: 'webhook-sweep',
  queue: { policy: 'singleton', retryLimit: 0, expireInSeconds: 300, deleteAfterSeconds: 3600 },
  work: {
    handler: async (deps) => {
      await sweepStrandedDeliveries(deps);
    },
  },
  schedules: [{ cron: '* * * * *', data: { v: 1 }, key: 'webhook-sweep' }],
});
