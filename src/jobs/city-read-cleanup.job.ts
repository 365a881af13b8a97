import { forgetUnusedReads } from '../services/city-data/index.js';
import { defineQueue } from './queue.js';

/** Hourly: page walks and cached totals of the read path unused for a day are removed. */
export const cityReadCleanupQueue = defineQueue<{ v: 1 }>({
  name: 'city-read-cleanup',
  queue: { policy: 'singleton', retryLimit: 3, retryDelay: 60, expireInSeconds: 3600, deleteAfterSeconds: 7 * 24 * 3600 },
  work: {
    handler: async (deps) => {
      await forgetUnusedReads(deps);
    },
  },
  schedules: [{ cron: '29 * * * *', data: { v: 1 }, key: 'city-read-cleanup' }],
});
