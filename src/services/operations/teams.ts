import type { AdminTeam } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { insertTeam, listTeamsOfTenant, type TeamRow } from '../../db/repositories/operations/team.repository.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { canSee, requireTenantRole, type AdminAccess } from '../operators/index.js';

export function teamView(row: TeamRow): AdminTeam {
  return { id: row.id, tenantId: row.tenant_id, name: row.name, createdAt: row.created_at.toISOString() };
}

/** A field team of a tenant; names are unique per tenant (409 conflict). */
export async function createTeam(deps: ServiceDeps, actor: Actor, tenantId: string, name: string): Promise<AdminTeam> {
  const errors: FieldError[] = [];
  const trimmed = name?.trim() ?? '';
  if (trimmed.length < 1 || trimmed.length > 200) errors.push({ pointer: '/name', message: 'must be 1 to 200 characters' });
  if (!isUuid(tenantId ?? '')) errors.push({ pointer: '/tenantId', message: 'must be a tenant id (UUID)' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  // A tenant the caller cannot see is as one that does not exist.
  if (!canSee(actor.access, tenantId)) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/tenantId', message: 'no such tenant' }]);
  requireTenantRole(actor.access, tenantId, 'city-admin', `tenant ${tenantId}`);
  return deps.db.transaction().execute(async (tx) => {
    if (!(await findTenant(tx, tenantId))) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/tenantId', message: 'no such tenant' }]);
    const taken = await tx.selectFrom('team').select('id').where('tenant_id', '=', tenantId).where('name', '=', trimmed).executeTakeFirst();
    if (taken) throw new AppError('conflict', { reason: `team name "${trimmed}" is already taken in this tenant` });
    let row: TeamRow;
    try {
      row = await insertTeam(tx, { tenant_id: tenantId, name: trimmed });
    } catch (err) {
      // A concurrent create with the same name: the unique constraint decides.
      if ((err as { code?: string }).code === '23505') throw new AppError('conflict', { reason: `team name "${trimmed}" is already taken in this tenant` });
      throw err;
    }
    const view = teamView(row);
    await recordAudit(tx, actor, { tenantId, action: 'team.create', entityType: 'team', entityId: row.id, before: null, after: view });
    return view;
  });
}

/** A tenant's teams; a tenant the caller cannot see is not-found, as an unknown one. */
export async function listTeams(deps: ServiceDeps, access: AdminAccess, tenantId: string): Promise<AdminTeam[]> {
  if (!isUuid(tenantId ?? '')) throw new AppError('invalid-parameter', {}, [{ pointer: '/tenantId', message: 'must be a tenant id (UUID)' }]);
  if (!canSee(access, tenantId) || !(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
  return (await listTeamsOfTenant(deps.db, tenantId)).map(teamView);
}
