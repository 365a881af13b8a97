import type { AttachmentFailure } from '../../../generated/admin/types.gen.js';
import { listAttachmentFailures, type AttachmentFailureRow } from '../../db/repositories/intake/attachment.repository.js';
import type { Executor } from '../../db/database.js';
import { AppError } from '../../lib/errors.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { PLATFORM_ACCESS, requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';

/** An attachment URL that could not be downloaded, kept for manual review. */
export type AttachmentFailureView = AttachmentFailure;

function view(r: AttachmentFailureRow & { partner: string; alert_number: number }): AttachmentFailureView {
  return {
    id: r.id,
    createdAt: r.created_at.toISOString(),
    partner: r.partner,
    protocolNumber: r.protocol_number,
    alertId: r.alert_id,
    alertNumber: r.alert_number,
    attachmentId: r.attachment_id,
    url: r.url,
    filename: r.filename,
    contentType: r.content_type,
    errorCode: r.error_code,
    detail: r.detail,
    attempts: r.attempts,
    dismissedAt: r.dismissed_at ? r.dismissed_at.toISOString() : null,
    dismissedBy: r.dismissed_by,
  };
}

/** One failure as the list shows it. */
export async function failureView(db: Executor, id: string): Promise<AttachmentFailureView> {
  const row = await db
    .selectFrom('attachment_failure as f')
    .innerJoin('external_system as e', 'e.id', 'f.external_system_id')
    .innerJoin('alert as a', 'a.id', 'f.alert_id')
    .selectAll('f')
    .select(['e.code as partner', 'a.alert_number'])
    .where('f.id', '=', id)
    .executeTakeFirstOrThrow();
  return view(row);
}

/**
 * The tenant's failed attachment URLs, newest first (at most `limit`, default 100);
 * dismissed ones only with `includeDismissed`. Any role on the tenant may read them.
 */
export async function attachmentFailures(
  deps: ServiceDeps,
  tenantId: string,
  opts: { limit?: number; since?: Date; includeDismissed?: boolean; externalSystemId?: string } = {},
  access: AdminAccess = PLATFORM_ACCESS,
): Promise<AttachmentFailureView[]> {
  const resource = `tenant ${tenantId}`;
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, tenantId, 'viewer', resource);
  if (!(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource });
  const rows = await listAttachmentFailures(deps.db, tenantId, { limit: opts.limit ?? 100, since: opts.since, includeDismissed: opts.includeDismissed, externalSystemId: opts.externalSystemId });
  return rows.map(view);
}
