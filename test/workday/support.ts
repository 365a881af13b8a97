import type { AdminAccess, TenantRole } from '../../src/services/operators/index.js';

/** The access of an operator granted one tenant (what a narrowed token carries). */
export function cityAccess(tenantId: string, role: TenantRole = 'city-admin'): AdminAccess {
  return { platformAdmin: false, grants: new Map([[tenantId, role]]) };
}

/** An actor with that access, audited as an admin token of its own. */
export function outsiderCaller(access: AdminAccess) {
  return { kind: 'admin-token' as const, name: 'other-city', access };
}
