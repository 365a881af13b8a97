import { defineQueue } from './queue.js';
import { reconcilePartnerPolls } from '../services/partner-poll/index.js';

/**
 * Every minute: every polling-mode partner has a poll chain, due no later than its
 * settings say. Starts polling for partners created, enabled or switched to polling
 * since, and applies a shortened interval to the poll already waiting.
 */
export const partnerPollReconcileQueue = defineQueue<Record<string, never>>({
  name: 'partner-poll-reconcile',
  queue: { policy: 'exclusive', retryLimit: 0, expireInSeconds: 300, deleteAfterSeconds: 3600 },
  work: {
    handler: async (deps) => {
      await reconcilePartnerPolls(deps);
    },
  },
  schedules: [{ cron: '* * * * *', key: 'partner-poll-reconcile' }],
});
