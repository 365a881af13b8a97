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

/** True when the caller holds `role` (or more) on at least one tenant. */
export function holdsRoleSomewhere(access: AdminAccess, role: TenantRole): boolean {
  if (access.platformAdmin) return true;
  for (const held of access.grants.values()) if (rank(held) >= rank(role)) return true;
  return false;
}

/**
 * The row when the caller holds `role` on its tenant. A missing row or a tenant the
 * caller cannot see: not-found for `resource`, exactly as an unknown id; too low a
 * role: forbidden. Services call it on the row they loaded (or locked) before acting.
 */
export function inScope<T extends { tenant_id: string }>(access: AdminAccess, row: T | null | undefined, role: TenantRole, resource: string): T {
  if (!row) throw new AppError('not-found', { resource });
  requireTenantRole(access, row.tenant_id, role, resource);
  return row;
}

/** Whether the caller can see the tenant at all (a tenantId in a query or body). */
export function canSee(access: AdminAccess, tenantId: string): boolean {
  return roleOn(access, tenantId) !== null;
}

/** The lower of two roles. */
export function lowerRole(a: TenantRole, b: TenantRole): TenantRole {
  return rank(a) <= rank(b) ? a : b;
}

/** True when `role` is at least `floor`. */
export function roleAtLeast(role: TenantRole, floor: TenantRole): boolean {
  return rank(role) >= rank(floor);
}

/**
 * What a token with its own grants may reach inside its owner's access: on each of
 * its tenants, the lower of the two roles; nothing the owner cannot reach. Never more
 * than the owner holds, whatever the token was given when it was made.
 */
export function narrowAccess(owner: AdminAccess, grants: ReadonlyMap<string, TenantRole>): AdminAccess {
  const out = new Map<string, TenantRole>();
  for (const [tenantId, role] of grants) {
    const held = roleOn(owner, tenantId);
    if (held !== null) out.set(tenantId, lowerRole(held, role));
  }
  return { platformAdmin: false, grants: out };
}

export function isTenantRole(value: unknown): value is TenantRole {
  return typeof value === 'string' && (TENANT_ROLES as readonly string[]).includes(value);
}
