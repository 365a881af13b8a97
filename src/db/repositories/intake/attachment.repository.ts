import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from '../../database.js';
import type { AlertAttachmentTable, AttachmentFailureTable } from '../../tables/intake.js';

export type AlertAttachmentRow = Selectable<AlertAttachmentTable>;
export type AttachmentFailureRow = Selectable<AttachmentFailureTable>;

/** The alert's attachments in arrival order. */
export async function listAlertAttachments(db: Executor, alertId: string): Promise<AlertAttachmentRow[]> {
  return db.selectFrom('alert_attachment').selectAll().where('alert_id', '=', alertId).orderBy('seq').execute();
}

export async function insertAlertAttachment(tx: Tx, row: Insertable<AlertAttachmentTable>): Promise<void> {
  await tx.insertInto('alert_attachment').values(row).execute();
}

export async function updateAlertAttachment(tx: Tx, id: string, patch: Updateable<AlertAttachmentTable>): Promise<void> {
  await tx.updateTable('alert_attachment').set({ ...patch, updated_at: new Date() }).where('id', '=', id).execute();
}

export async function insertAttachmentFailure(tx: Tx, row: Insertable<AttachmentFailureTable>): Promise<void> {
  await tx.insertInto('attachment_failure').values(row).execute();
}

/** The tenant's failed attachment URLs, newest first. */
export async function listAttachmentFailures(db: Executor, tenantId: string, opts: { limit: number; since?: Date; includeDismissed?: boolean; externalSystemId?: string }): Promise<(AttachmentFailureRow & { partner: string; alert_number: number })[]> {
  let q = db
    .selectFrom('attachment_failure as f')
    .innerJoin('external_system as e', 'e.id', 'f.external_system_id')
    .innerJoin('alert as a', 'a.id', 'f.alert_id')
    .selectAll('f')
    .select(['e.code as partner', 'a.alert_number'])
    .where('f.tenant_id', '=', tenantId);
  if (opts.since) q = q.where('f.created_at', '>=', opts.since);
  if (opts.externalSystemId) q = q.where('f.external_system_id', '=', opts.externalSystemId);
  if (!opts.includeDismissed) q = q.where('f.dismissed_at', 'is', null);
  return q.orderBy('f.created_at', 'desc').orderBy('f.id').limit(opts.limit).execute();
}

export async function lockAttachmentFailure(tx: Tx, id: string): Promise<AttachmentFailureRow | undefined> {
  return tx.selectFrom('attachment_failure').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** An alert's attachment, for reading its blob. */
export async function findAlertAttachment(db: Executor, alertId: string, attachmentId: string) {
  return db.selectFrom('alert_attachment').selectAll().where('alert_id', '=', alertId).where('id', '=', attachmentId).executeTakeFirst();
}

/** What triage shows of an alert's photos: each attachment's result, in the request's order. */
export async function attachmentResultsOf(db: Executor, alertIds: readonly string[]) {
  if (alertIds.length === 0) return [];
  return db
    .selectFrom('alert_attachment')
    .select(['id', 'alert_id', 'filename', 'content_type', 'success', 'error_code', 'size_bytes'])
    .where('alert_id', 'in', alertIds)
    .orderBy('alert_id')
    .orderBy('seq')
    .execute();
}
