/**
 * Intake of alerts and service orders from partners: validation, idempotency, numbering, city policy.
 *
 * This file is the capability's only door: code outside src/services/intake/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { submitIntake, type IntakeCaller } from './service.js';
export { readPartnerRequest } from './request-read.js';
export { parseIdempotencyKey, type AttachmentInput } from './validate.js';
