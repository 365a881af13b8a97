/**
 * The partner kit: a typed client of Lumen's partner API (generated from
 * openapi/partner.yaml into generated/partner-client/) with the loops a partner
 * writes anyway: the city-data sync rounds (keyset cursor and page walk), the events
 * drain, and webhook verification in both signature schemes. Built into
 * dist/partner-kit/ by `npm run build`; nothing of the service imports it.
 *
 * This file is the kit's only door (test/unit/boundaries.test.ts).
 */
export { LumenApiError, createLumenClient, type LumenClient, type LumenClientOptions } from './client.js';
export { drainEvents, type DrainOptions, type DrainResult } from './events.js';
export { syncByCursor, syncByPages, type CityList, type SyncOptions, type SyncResult } from './sync.js';
export { REPLAY_WINDOW_SECONDS, standardWebhookSecret, verifyLumenSignature, verifyStandardWebhook, verifyWebhook, type IncomingHeaders } from './webhooks.js';
export type * from '../../generated/partner-client/types.gen.js';
