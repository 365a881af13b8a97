/**
 * Partner systems: settings, scopes, keys and transports.
 *
 * This file is the capability's only door: code outside src/services/partners/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { createPartner, getPartner, listPartners, MAX_KEY_OVERLAP_SECONDS, partnerKeys, rotatePartnerKey, setPartnerEnabled, updatePartner, type CreatePartnerInput, type IssuedPartnerKey, type PartnerKeys, type PartnerView, type RotatePartnerKeyInput, type UpdatePartnerInput } from './service.js';
export { rewrapSecrets, undecryptableSecrets, type RewrapResult } from './secrets.js';
export { DEFAULT_SECRET_OVERLAP_SECONDS, dropExpiredWebhookSecrets, rotateWebhookSecret, type RotateWebhookSecretInput } from './webhook-secret.js';
