/**
 * Polling a partner's endpoint for new requests: schedule, fetch, store, status and rejected items.
 *
 * This file is the capability's only door: code outside src/services/partner-poll/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { PARTNER_POLL_QUEUE, reconcilePartnerPoll, type PartnerPollJobData } from './schedule.js';
export { reconcilePartnerPolls, runPartnerPollJob } from './service.js';
export { getPartnerPollStatus, listRejectedInbound, pollPartnerNow, requestedPollEnded, type PartnerPollStatus, type RejectedInboundItemView } from './status.js';
export { acceptRejectedItem, dismissRejectedItem, retryRejectedItem, type ItemCorrections } from './review.js';
