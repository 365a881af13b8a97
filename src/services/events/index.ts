/**
 * Events: the outbox, webhook dispatch and delivery, redelivery, events polling and clean-up.
 *
 * This file is the capability's only door: code outside src/services/events/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { getWebhookDelivery, listWebhookDeliveries, redeliver, redeliverDead, redeliverSince, type WebhookDeliveryView } from './deliveries.js';
export { LEASE_MS, attemptDelivery, recordAttempts, type Attempted, type SecretCache } from './delivery.js';
export { DELIVERY_CHANNEL, parseNotificationPayload } from './dispatch.js';
export { deleteExpiredEvents, sweepStrandedDeliveries } from './maintenance.js';
export { emitEvent } from './outbox.js';
export { heldActionOf, holdEventsFor, releaseAction, releaseDueActions } from './hold.js';
export { pollEvents } from './polling.js';
export { sendTestEvent } from './test-event.js';
