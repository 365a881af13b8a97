/**
 * The audit log: who did what, before and after, per tenant.
 *
 * This file is the capability's only door: code outside src/services/audit/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { actorLabel, cliActor, listAuditEntries, recordAudit, type Actor, type AuditEntryView } from './log.js';
