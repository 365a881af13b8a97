import { AppError } from '../../lib/errors.js';

/**
 * What an admin caller may reach. Roles are per tenant and ordered:
 * `viewer` (reads) < `triager` (alerts and orders) < `city-admin` (also partners, keys,
 * reasons, mappings, teams, tenant settings). A platform admin holds every role on every
 * tenant, plus tenant creation and operators.
 */
export type TenantRole = 'viewer' | 'triager' | 'city-admin';

export const TENANT_ROLES: readonly TenantRole[] = ['viewer', 'triager', 'city-admin'];

export interface AdminAccess {
  readonly platformAdmin: boolean;
  /** Tenant id → role, for the granted tenants (empty for a platform admin: see platformAdmin). */
  readonly grants: ReadonlyMap<string, TenantRole>;
}

/** Every tenant, every role: the CLI and platform-wide service tokens. */
export const PLATFORM_ACCESS: AdminAccess = Object.freeze({ platformAdmin: true, grants: new Map<string, TenantRole>() });

const rank = (role: TenantRole): number => TENANT_ROLES.indexOf(role);

/** The role held on a tenant, or null when the tenant is not visible at all. */
export function roleOn(access: AdminAccess, tenantId: string): TenantRole | null {
  if (access.platformAdmin) return 'city-admin';
  return access.grants.get(tenantId) ?? null;
}

/**
 * Asserts `role` (or more) on `tenantId`. A tenant the caller cannot see answers
 * not-found for `resource`, exactly as an id that does not exist (no existence leak);
 * a visible tenant with too low a role answers forbidden.
 */
export function requireTenantRole(access: AdminAccess, tenantId: string, role: TenantRole, resource: string): void {
  const held = roleOn(access, tenantId);
  if (held === null) throw new AppError('not-found', { resource });
  if (rank(held) < rank(role)) throw new AppError('forbidden', { scopes: role });
}

/** Tenants whose rows a list may show: 'all' for a platform admin. */
export function visibleTenants(access: AdminAccess): readonly string[] | 'all' {
  return access.platformAdmin ? 'all' : [...access.grants.keys()];
}

/** Platform-wide actions (tenant creation, operators): forbidden to everyone else. */
export function requirePlatformAdmin(access: AdminAccess): void {
  if (!access.platformAdmin) throw new AppError('forbidden', { scopes: 'platform-admin' });
}
