import { AppError } from '../../lib/errors.js';
import type { OperatorGrantRow, OperatorRow } from '../../db/repositories/operators/operator.repository.js';
import { holdsRoleSomewhere, type AdminAccess } from './access.js';

/**
 * What a city-admin may do to operators (issue 23 §4 defect 10); a platform admin may
 * do all of it everywhere.
 *
 * - They see the operators holding a role in a city they administer, and in each
 *   only the roles of those cities: never another city's role, id or name. An
 *   operator with no role in their cities does not exist for them (404).
 * - They grant and revoke roles in the cities they administer only, never
 *   platform-admin (that is not a role on a city).
 * - They invite an operator with roles in their cities only.
 * - They may not disable, enable or reset the password of an operator who also holds
 *   a role in a city they do not administer, or who is a platform admin: those
 *   accounts are shared with people they do not answer for (403
 *   operator-beyond-your-cities).
 */
export type Administered = ReadonlySet<string> | 'all';

/** The cities the caller administers; forbidden to a caller who administers none. */
export function administeredBy(access: AdminAccess): Administered {
  if (access.platformAdmin) return 'all';
  if (!holdsRoleSomewhere(access, 'city-admin')) throw new AppError('forbidden', { scopes: 'city-admin' });
  return new Set([...access.grants].filter(([, role]) => role === 'city-admin').map(([tenantId]) => tenantId));
}

export function administers(scope: Administered, tenantId: string): boolean {
  return scope === 'all' || scope.has(tenantId);
}

/** The grants the caller may see: those of the cities it administers. */
export function visibleGrants(scope: Administered, grants: readonly OperatorGrantRow[]): OperatorGrantRow[] {
  return scope === 'all' ? [...grants] : grants.filter((g) => scope.has(g.tenant_id));
}

/** The operator holds a role the caller does not administer (or is a platform admin). */
export function holdsBeyond(scope: Administered, row: OperatorRow, grants: readonly OperatorGrantRow[]): boolean {
  if (scope === 'all') return false;
  return row.platform_admin || grants.some((g) => g.operator_id === row.id && !scope.has(g.tenant_id));
}

/** The operator exists for this caller: a platform admin, or a role in one of the caller's cities. */
export function requireVisible(scope: Administered, row: OperatorRow, grants: readonly OperatorGrantRow[], ref: string): void {
  if (scope !== 'all' && !grants.some((g) => g.operator_id === row.id && scope.has(g.tenant_id))) throw new AppError('not-found', { resource: `operator ${ref}` });
}

/** Account-wide actions (disable, enable, reset the password) need the whole account in the caller's cities. */
export function requireWhollyAdministered(scope: Administered, row: OperatorRow, grants: readonly OperatorGrantRow[]): void {
  if (holdsBeyond(scope, row, grants)) throw new AppError('operator-beyond-your-cities', {});
}
