import { listAttachmentFailures } from '../../db/repositories/intake/attachment.repository.js';
import { AppError } from '../../lib/errors.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';

/** An attachment URL that could not be downloaded, kept for manual review. */
export interface AttachmentFailureView {
  id: string;
  createdAt: string;
  partner: string;
  protocolNumber: string;
  alertId: string;
  alertNumber: number;
  attachmentId: string;
  url: string;
  filename: string | null;
  contentType: string;
  errorCode: string;
  detail: string;
  attempts: number;
}

/** The tenant's failed attachment URLs, newest first (at most `limit`, default 100). */
export async function attachmentFailures(deps: ServiceDeps, tenantId: string, opts: { limit?: number; since?: Date } = {}): Promise<AttachmentFailureView[]> {
  if (!isUuid(tenantId) || !(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
  const rows = await listAttachmentFailures(deps.db, tenantId, { limit: opts.limit ?? 100, since: opts.since });
  return rows.map((r) => ({
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
  }));
}
