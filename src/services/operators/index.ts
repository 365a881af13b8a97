/**
 * Operators and their access: roles per tenant (access.ts) and admin tokens.
 *
 * This file is the capability's only door: code outside src/services/operators/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { createAdminToken, listAllAdminTokens, revokeAdminTokenById, type AdminTokenView } from './tokens.js';
export { PLATFORM_ACCESS, TENANT_ROLES, requirePlatformAdmin, requireTenantRole, roleOn, visibleTenants, type AdminAccess, type TenantRole } from './access.js';
