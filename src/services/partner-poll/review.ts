import { sql } from 'kysely';
import type { RuntimeDeps } from '../deps.js';
import { lockRejectedItem, resolveRejectedItems } from '../../db/repositories/partner-poll.repository.js';
import { findExternalSystem } from '../../db/repositories/external-system.repository.js';
import type { Tx } from '../../db/database.js';
import { AppError } from '../../lib/errors.js';
import { actorLabel, recordAudit, type Actor } from '../audit/index.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { submitPolledItem } from './intake.js';
import { rejectedItemView, type RejectedInboundItemView } from './status.js';

/** A rejected item the caller may act on (triager on its tenant), locked; not-found otherwise. */
async function lockItem(tx: Tx, access: AdminAccess, id: string) {
  const resource = `rejected inbound item ${id}`;
  const row = isUuid(id) ? await lockRejectedItem(tx, id) : undefined;
  if (!row) throw new AppError('not-found', { resource });
  requireTenantRole(access, row.tenant_id, 'triager', resource);
  return row;
}

async function viewOf(db: ServiceDeps['db'], id: string, partnerId: string): Promise<RejectedInboundItemView> {
  const partner = (await findExternalSystem(db, partnerId))!;
  const row = (await db.selectFrom('rejected_inbound_item').selectAll().where('id', '=', id).executeTakeFirst())!;
  return rejectedItemView(partner.code, row);
}

/** Looked at, nothing to do: it leaves the open list and the attention count. Idempotent; audited on the partner. */
export async function dismissRejectedItem(deps: ServiceDeps, by: Actor, id: string): Promise<RejectedInboundItemView> {
  const partnerId = await deps.db.transaction().execute(async (tx) => {
    const row = await lockItem(tx, by.access, id);
    if (!row.dismissed_at) {
      await tx.updateTable('rejected_inbound_item').set({ dismissed_at: sql<Date>`now()`, dismissed_by: actorLabel(by) }).where('id', '=', row.id).execute();
      await recordAudit(tx, by, { tenantId: row.tenant_id, action: 'inbound.dismiss', entityType: 'partner', entityId: row.external_system_id, before: { itemId: row.id, protocolNumber: row.protocol_number }, after: null });
    }
    return row.external_system_id;
  });
  return viewOf(deps.db, id, partnerId);
}

/**
 * The stored item through intake again, exactly as a poll would submit it (for a
 * refusal whose cause was fixed meanwhile, for example a partner scope or a tenant
 * setting). Accepted: it and the other open refusals of its protocolNumber get
 * `resolvedAt`. Refused again: it keeps the new problem and reasons. Audited either way.
 */
export async function retryRejectedItem(deps: RuntimeDeps, by: Actor, id: string, signal?: AbortSignal): Promise<{ accepted: boolean; item: RejectedInboundItemView }> {
  const seen = await deps.db.transaction().execute((tx) => lockItem(tx, by.access, id));
  const partner = await findExternalSystem(deps.db, seen.external_system_id);
  if (!partner) throw new AppError('not-found', { resource: `rejected inbound item ${id}` });
  const outcome = await submitPolledItem(deps, { externalSystemId: partner.id, tenantId: partner.tenant_id, scopes: partner.scopes }, seen.item, signal);
  await deps.db.transaction().execute(async (tx) => {
    if (outcome.kind === 'accepted') {
      await tx.updateTable('rejected_inbound_item').set({ resolved_at: sql<Date>`now()` }).where('id', '=', seen.id).where('resolved_at', 'is', null).execute();
      if (seen.protocol_number) await resolveRejectedItems(tx, partner.id, seen.protocol_number);
    } else {
      await tx.updateTable('rejected_inbound_item').set({ problem_code: outcome.code, reasons: JSON.stringify(outcome.reasons) }).where('id', '=', seen.id).execute();
    }
    await recordAudit(tx, by, { tenantId: seen.tenant_id, action: 'inbound.retry', entityType: 'partner', entityId: partner.id, before: { itemId: seen.id, problemCode: seen.problem_code }, after: { accepted: outcome.kind === 'accepted' } });
  });
  return { accepted: outcome.kind === 'accepted', item: await viewOf(deps.db, seen.id, partner.id) };
}
