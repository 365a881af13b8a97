import type { Executor } from '../../db/database.js';
import { grantsOfOperators } from '../../db/repositories/operators/operator.repository.js';
import { grantsOfTokens, type LiveAdminToken } from '../../db/repositories/operators/admin-token.repository.js';
import { narrowAccess, PLATFORM_ACCESS, type AdminAccess, type TenantRole } from './access.js';

/** An operator's access as their rows are now: every tenant for a platform admin, else their grants. */
export async function accessOfOperator(db: Executor, operator: { id: string; platform_admin: boolean }): Promise<AdminAccess> {
  if (operator.platform_admin) return PLATFORM_ACCESS;
  const grants = await grantsOfOperators(db, [operator.id]);
  return { platformAdmin: false, grants: new Map(grants.map((g) => [g.tenant_id, g.role])) };
}

/**
 * A token's access, computed at each request from the rows as they are now: a service
 * token's own reach, never more than its maker (the operator who made it, when one did)
 * holds now; an operator's token never more than the operator holds (a grant taken from
 * the operator is gone from their tokens at once). Null when the token's operator, or
 * its maker, is disabled.
 */
export async function accessOfToken(db: Executor, token: LiveAdminToken): Promise<AdminAccess | null> {
  const own = async (): Promise<Map<string, TenantRole>> => new Map((await grantsOfTokens(db, [token.id])).map((g) => [g.tenant_id, g.role]));
  if (token.operator_id === null) {
    if (token.made_by !== null) {
      // The maker disabled, or gone: the token dies with them; their grants bound it.
      if (token.maker_disabled_at !== null || token.maker_platform_admin === null) return null;
      const maker = await accessOfOperator(db, { id: token.made_by, platform_admin: token.maker_platform_admin });
      if (token.scope === 'platform') return maker.platformAdmin ? PLATFORM_ACCESS : null;
      return narrowAccess(maker, await own());
    }
    if (token.scope === 'platform') return PLATFORM_ACCESS;
    return { platformAdmin: false, grants: await own() };
  }
  if (token.owner_disabled_at !== null || token.owner_platform_admin === null) return null;
  const owner = await accessOfOperator(db, { id: token.operator_id, platform_admin: token.owner_platform_admin });
  if (token.scope === 'grants') return narrowAccess(owner, await own());
  // 'owner', and 'platform' on an operator's token: the operator's access, never more.
  return owner;
}
