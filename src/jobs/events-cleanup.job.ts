import { defineQueue } from './queue.js';
import { deleteExpiredEvents } from '../services/events/index.js';

/** Hourly: events past the retention (at least 30 days) are removed with their delivery log. */
export const eventsCleanupQueue = defineQueue<{ v: 1 }>({
  name: 'events-cleanup',
  queue: { policy: 'singleton', retryLimit: 3, retryDelay: 60, expireInSeconds: 3600, deleteAfterSeconds: 7 * 24 * 3600 },
  work: {
    handler: async (deps) => {
      await deleteExpiredEvents(deps);
    },
  },
  schedules: [{ cron: '41 * * * *', data: { v: 1 }, key: 'events-cleanup' }],
});
