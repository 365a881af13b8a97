/**
 * Telemetry turned into work: a lamp reported out (relay off at night, or the device
 * offline) for longer than its tenant allows becomes a TELEMETRY_LAMP_OUT alert through
 * the intake path, at most one open per pole; a good report adds a note to it.
 *
 * This file is the capability's only door: code outside src/services/telemetry-alerts/
 * imports from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { detectLampOuts, TELEMETRY_ACTOR, type LampOutRun } from './detect.js';
export { setLampOutPolicy, type LampOutPolicy, type LampOutPolicyInput } from './settings.js';
export { LAMP_OUT_REASON } from './source.js';
