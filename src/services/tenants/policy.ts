import { AppError, type FieldError } from '../../lib/errors.js';
import type { IntakePolicy } from '../../db/tables/foundation.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { requireTenantRole } from '../operators/index.js';
import { isUuid, tenantView, type TenantView } from './service.js';

/**
 * Sets a tenant's intake policy and records it in the audit log, in one transaction.
 * Setting the policy the tenant already has changes nothing and records nothing.
 */
export async function changeIntakePolicy(deps: ServiceDeps, actor: Actor, tenantId: string, policy: string): Promise<TenantView> {
  if (policy !== 'automatic' && policy !== 'manual') {
    const errors: FieldError[] = [{ pointer: '/intakePolicy', message: 'must be automatic or manual' }];
    throw new AppError('validation-failed', { count: 1 }, errors);
  }
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
  requireTenantRole(actor.access, tenantId, 'city-admin', `tenant ${tenantId}`);
  return deps.db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('tenant').selectAll().where('id', '=', tenantId).forUpdate().executeTakeFirst();
    if (!row) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
    if (row.intake_policy === policy) return tenantView(row);
    const updated = await tx
      .updateTable('tenant')
      .set({ intake_policy: policy as IntakePolicy, updated_at: new Date() })
      .where('id', '=', tenantId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, actor, {
      tenantId,
      action: 'tenant.set-intake',
      entityType: 'tenant',
      entityId: tenantId,
      before: { intakePolicy: row.intake_policy },
      after: { intakePolicy: updated.intake_policy },
    });
    return tenantView(updated);
  });
}
