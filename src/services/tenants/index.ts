/**
 * Tenants (cities) and their intake policy.
 *
 * This file is the capability's only door: code outside src/services/tenants/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { changeIntakePolicy } from './policy.js';
export { createTenant, createTenantAs, getTenant, isUuid, listAllTenants, listVisibleTenants, showTenant, tenantView, type CreateTenantInput, type TenantView } from './service.js';
