import { sql } from 'kysely';
import type { AttachmentFailure } from '../../../generated/admin/types.gen.js';
import { AppError } from '../../lib/errors.js';
import { blobStoreFor } from '../../lib/blob-store/index.js';
import { findAlertAttachment, lockAttachmentFailure } from '../../db/repositories/intake/attachment.repository.js';
import type { AttachmentContentType } from '../../db/tables/intake.js';
import { actorLabel, recordAudit, type Actor } from '../audit/index.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { failureView } from './failures.js';
import { MAX_ATTACHMENT_BYTES } from './content.js';
import { attachmentMemory } from './memory.js';
import { blobPathOf, fetchContent } from './prepare.js';

/** An alert the caller may read (its id and tenant, as the operations' resolver gives them). */
export interface AlertRef {
  id: string;
  tenantId: string;
}

export interface AttachmentContent {
  bytes: Buffer;
  contentType: AttachmentContentType;
  filename: string | null;
  sha256: string;
}

/**
 * The stored copy of one of an alert's attachments. Not-found for an attachment of
 * another alert, one that was never stored (its download or check failed), or a blob
 * missing from the store.
 */
export async function attachmentContent(deps: ServiceDeps, access: AdminAccess, alert: AlertRef, attachmentId: string): Promise<AttachmentContent> {
  const resource = `attachment ${attachmentId}`;
  requireTenantRole(access, alert.tenantId, 'viewer', resource);
  const row = isUuid(attachmentId) ? await findAlertAttachment(deps.db, alert.id, attachmentId) : undefined;
  if (!row || !row.success || !row.blob_path) throw new AppError('not-found', { resource });
  const bytes = await blobStoreFor(deps.config.blobStore).get(row.blob_path);
  if (!bytes) throw new AppError('not-found', { resource });
  return { bytes, contentType: row.content_type, filename: row.filename, sha256: row.content_sha256 ? row.content_sha256.toString('hex') : '' };
}

async function lockFailure(deps: ServiceDeps, tx: Parameters<typeof lockAttachmentFailure>[0], access: AdminAccess, id: string) {
  const resource = `attachment failure ${id}`;
  const row = isUuid(id) ? await lockAttachmentFailure(tx, id) : undefined;
  if (!row) throw new AppError('not-found', { resource });
  requireTenantRole(access, row.tenant_id, 'triager', resource);
  return row;
}

/**
 * Marks a failed URL as looked at (nothing more to do): it leaves the attention count
 * and the default list. Dismissing it again changes nothing. Audited on the alert.
 */
export async function dismissAttachmentFailure(deps: ServiceDeps, by: Actor, failureId: string): Promise<AttachmentFailure> {
  return deps.db.transaction().execute(async (tx) => {
    const row = await lockFailure(deps, tx, by.access, failureId);
    if (row.dismissed_at) return failureView(tx, row.id);
    await tx.updateTable('attachment_failure').set({ dismissed_at: sql<Date>`now()`, dismissed_by: actorLabel(by) }).where('id', '=', row.id).execute();
    await recordAudit(tx, by, { tenantId: row.tenant_id, action: 'attachment.dismiss', entityType: 'alert', entityId: row.alert_id, before: { failureId: row.id, url: row.url }, after: null });
    return failureView(tx, row.id);
  });
}

/**
 * Downloads a failed URL again, now (the full three attempts). On success the blob is
 * stored, the alert's attachment becomes a success and the failure row is deleted
 * (`resolved: true`); otherwise the failure keeps the new cause and its attempts add
 * up. Audited on the alert either way. The download runs before the transaction; the
 * failure row is locked while the result is recorded, so two retries at once record
 * one success.
 */
export async function retryAttachmentFailure(deps: ServiceDeps, by: Actor, failureId: string, signal?: AbortSignal): Promise<{ resolved: boolean; failure: AttachmentFailure | null }> {
  const seen = await deps.db.transaction().execute((tx) => lockFailure(deps, tx, by.access, failureId));
  const blobs = blobStoreFor(deps.config.blobStore);
  const contentType = seen.content_type as AttachmentContentType;
  const limits = { ...deps.config.attachmentDownload, allowLoopback: deps.config.allowLoopback, shareKey: seen.tenant_id };
  const memory = attachmentMemory(deps.config).for(seen.tenant_id);
  const path = blobPathOf(seen.tenant_id, seen.alert_id, seen.attachment_id, contentType);
  // Held in the process's attachment memory like an intake's download: 5 MiB until it is in.
  const lease = await memory.acquire(MAX_ATTACHMENT_BYTES, signal);
  let got: Awaited<ReturnType<typeof fetchContent>>;
  try {
    got = await fetchContent({ blobs, log: deps.log, limits, memory }, { kind: 'url', url: seen.url, contentType, filename: seen.filename }, signal);
    if (got.ok) await blobs.put(path, got.bytes, contentType, signal);
  } finally {
    lease.release();
  }
  return deps.db.transaction().execute(async (tx) => {
    const row = await lockAttachmentFailure(tx, failureId);
    if (!row) return { resolved: true, failure: null };
    if (got.ok) {
      await tx.updateTable('alert_attachment').set({ success: true, blob_path: path, size_bytes: got.bytes.length, content_sha256: got.sha256, error_code: null, error_params: null }).where('id', '=', row.attachment_id).execute();
      await tx.deleteFrom('attachment_failure').where('id', '=', row.id).execute();
      await recordAudit(tx, by, { tenantId: row.tenant_id, action: 'attachment.retry', entityType: 'alert', entityId: row.alert_id, before: { failureId: row.id, errorCode: row.error_code }, after: { attachmentId: row.attachment_id, stored: true } });
      return { resolved: true, failure: null };
    }
    await tx.updateTable('attachment_failure').set({ error_code: got.code, detail: got.detail.slice(0, 1000), attempts: row.attempts + got.attempts }).where('id', '=', row.id).execute();
    await recordAudit(tx, by, { tenantId: row.tenant_id, action: 'attachment.retry', entityType: 'alert', entityId: row.alert_id, before: { failureId: row.id, errorCode: row.error_code }, after: { failureId: row.id, errorCode: got.code, stored: false } });
    return { resolved: false, failure: await failureView(tx, row.id) };
  });
}
