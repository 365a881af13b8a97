/**
 * Operators and their access: admin tokens.
 *
 * This file is the capability's only door: code outside src/services/operators/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { createAdminToken, listAllAdminTokens, revokeAdminTokenById, type AdminTokenView } from './tokens.js';
