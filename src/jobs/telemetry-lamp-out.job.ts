import { defineQueue } from './queue.js';
import { detectLampOuts } from '../services/telemetry-alerts/index.js';

/**
 * Every minute: the lamp-out rule over every tenant with a threshold (telemetry-alerts).
 * Singleton: one pass at a time across instances; a pass that dies is simply run again
 * (each outage has one protocol number, so a repeated alert is a resend).
 */
export const telemetryLampOutQueue = defineQueue<{ v: 1 }>({
  name: 'telemetry-lamp-out',
  queue: { policy: 'singleton', retryLimit: 2, retryDelay: 30, expireInSeconds: 300, deleteAfterSeconds: 24 * 3600 },
  work: {
    handler: async (deps) => {
      await detectLampOuts(deps);
    },
  },
  schedules: [{ cron: '* * * * *', data: { v: 1 }, key: 'telemetry-lamp-out' }],
});
