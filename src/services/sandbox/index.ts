/**
 * Partner sandboxes: a demo city per partner (`lumen partner create --sandbox`) where
 * the partner causes each event type on its own requests (openapi/sandbox.yaml).
 *
 * This file is the capability's only door: code outside src/services/sandbox/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { triggerSandboxEvent, type SandboxCaller } from './events.js';
export { createSandboxPartner, type SandboxResult } from './setup.js';
