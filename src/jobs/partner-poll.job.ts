import { defineQueue, drainingWork, eachJob } from './queue.js';
import { runPartnerPollJob } from '../services/partner-poll/index.js';
import { PARTNER_POLL_QUEUE, type PartnerPollJobData } from '../services/partner-poll/index.js';

/**
 * One poll of one partner's endpoint (interface 4.5, N7); each run queues the next.
 * `exclusive`: per partner (singletonKey) at most one job queued, retrying or running
 * across all instances, which is what makes "one poller per partner" hold.
 * Partner errors are handled inside the run (recorded, backed off with startAfter);
 * pg-boss retries only cover a run that died (shutdown, crash, database outage).
 */
export const partnerPollQueue = defineQueue<PartnerPollJobData>({
  name: PARTNER_POLL_QUEUE,
  queue: {
    policy: 'exclusive',
    retryLimit: 10,
    retryDelay: 1,
    retryBackoff: true,
    retryDelayMax: 60,
    // A run reads at most MAX_PAGES_PER_RUN pages within RUN_BUDGET_MS; the heartbeat
    // hands a crashed instance's poll to another one within a minute or so.
    expireInSeconds: 3600,
    heartbeatSeconds: 30,
    deleteAfterSeconds: 24 * 3600,
  },
  work: {
    // Partners due together (after a restart or an outage) are polled without a pause
    // between batches; still at most four polls at once (two workers, two polls each).
    options: drainingWork(2, { localConcurrency: 2 }),
    handler: async (deps, jobs) => eachJob(jobs, (job) => runPartnerPollJob(deps, job), 2),
  },
});
