import type { SendOptions } from 'pg-boss';
import type { Config } from '../config.js';
import type { Executor } from '../db/database.js';
import { geocodeAlertAgain } from '../services/geocoding/index.js';
import type { Jobs } from './index.js';
import { defineQueue, drainingWork, eachJob } from './queue.js';

export const GEOCODE_QUEUE = 'geocode-alert';

/** v1: geocode one alert again; stop trying after giveUpAt (ISO 8601). */
export interface GeocodeJobV1 {
  v: 1;
  alertId: string;
  giveUpAt: string;
}

/** Background geocoding goes on for this long after intake; then the alert waits for an operator. */
export const GEOCODE_RETRY_HOURS = 24;
/** Longest pause between two tries. */
const MAX_RETRY_DELAY_SECONDS = 6 * 3600;

/** Retry schedule of one job: exponential from geocodeRetryDelaySeconds, capped, ending by giveUpAt. */
function retryOptions(config: Pick<Config, 'geocodeRetryDelaySeconds'>): SendOptions {
  const delay = config.geocodeRetryDelaySeconds;
  return { startAfter: delay, retryLimit: 1000, retryDelay: delay, retryBackoff: true, retryDelayMax: MAX_RETRY_DELAY_SECONDS };
}

/**
 * Enqueues the background geocoding of an alert in the caller's transaction: the job
 * exists exactly when the alert (or its new address) is committed.
 */
export async function enqueueGeocode(jobs: Pick<Jobs, 'send'>, executor: Executor, alertId: string, config: Pick<Config, 'geocodeRetryDelaySeconds'>): Promise<void> {
  const data: GeocodeJobV1 = { v: 1, alertId, giveUpAt: new Date(Date.now() + GEOCODE_RETRY_HOURS * 3600_000).toISOString() };
  await jobs.send(executor, GEOCODE_QUEUE, data, retryOptions(config));
}

/**
 * A failed try fails its job, so pg-boss retries it with backoff; past giveUpAt the job
 * completes quietly and the alert stays flagged as not geolocated for operators.
 */
export const geocodeQueue = defineQueue<GeocodeJobV1>({
  name: GEOCODE_QUEUE,
  queue: { retryLimit: 1000, retryDelay: 60, retryBackoff: true, retryDelayMax: MAX_RETRY_DELAY_SECONDS, expireInSeconds: 300 },
  work: {
    // A backlog of retries (the geocoder was down) drains without a pause between
    // batches; the alerts of a batch are geocoded one after the other, as one job at a time was.
    options: drainingWork(4),
    handler: async (deps, jobs) =>
      eachJob(jobs, async (job) => {
        const result = await geocodeAlertAgain(deps, job.data.alertId);
        const log = deps.log.child({ job: GEOCODE_QUEUE, alertId: job.data.alertId, retryCount: job.retryCount });
        if (result.kind === 'located') {
          log.info({ orderUpdated: result.orderUpdated }, 'alert geolocated in the background');
        } else if (result.kind === 'miss') {
          if (Date.now() >= Date.parse(job.data.giveUpAt)) {
            log.warn({ misses: result.misses }, 'giving up geocoding the alert; an operator must set its coordinates');
            return;
          }
          throw new Error(`alert ${job.data.alertId} not geolocated yet: ${result.misses.join('; ')}`);
        }
      }),
  },
});
