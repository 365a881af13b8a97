import type { AttachmentResult, IntakeResponse } from '../../generated/partner/types.gen.js';
import type { Executor } from '../db/database.js';
import type { AlertRow } from '../db/repositories/alert.repository.js';
import type { AlertAttachmentRow } from '../db/repositories/attachment.repository.js';
import { findReason } from '../db/repositories/reason.repository.js';
import type { Language } from '../lib/i18n.js';
import { attachmentErrorMessage } from './attachments/messages.js';

/** One attachment result (2.6). `echo` overrides filename/contentType with what this request sent. */
export function attachmentResult(row: AlertAttachmentRow, lang: Language, echo?: { filename: string | null; contentType: string }): AttachmentResult {
  return {
    success: row.success,
    blobPath: row.blob_path,
    filename: echo ? echo.filename : row.filename,
    contentType: echo ? echo.contentType : row.content_type,
    sizeBytes: row.size_bytes,
    error: row.error_code ? attachmentErrorMessage(row.error_code, row.error_params, lang) : null,
  };
}

/**
 * The 2.6 body from the alert's state inside the caller's transaction. When the alert
 * has a service order (automatic mode, or linked later) the root describes the order:
 * its id, number, priority and creation time, status OPEN; otherwise the alert, status RECEIVED.
 */
export async function buildIntakeResponse(db: Executor, alert: AlertRow, lang: Language, attachments: AttachmentResult[]): Promise<IntakeResponse> {
  const reason = await findReason(db, alert.tenant_id, alert.reason_code);
  const order = alert.service_order_id
    ? await db.selectFrom('service_order').select(['id', 'number', 'priority', 'created_at']).where('id', '=', alert.service_order_id).executeTakeFirstOrThrow()
    : null;
  const alertResult: IntakeResponse['alert'] = {
    id: alert.id,
    alertNumber: alert.alert_number,
    alertReasonCode: alert.reason_code,
    alertReasonName: reason ? (lang === 'en' ? reason.name_en : reason.name_pt) : alert.reason_code,
    requesterName: alert.requester_name,
    requesterPhone: alert.requester_phone,
    description: alert.description,
    additionalNotes: alert.additional_notes,
    lampType: alert.lamp_type,
    externalRequestedAt: alert.requested_at.toISOString(),
    latitude: alert.latitude,
    longitude: alert.longitude,
    status: alert.status,
    attachments,
  };
  if (order) {
    return {
      id: order.id,
      internalProtocol: order.number,
      protocolNumber: alert.protocol_number,
      assetType: 'POLE',
      status: 'OPEN',
      priority: order.priority,
      createdAt: order.created_at.toISOString(),
      alert: alertResult,
    };
  }
  return {
    id: alert.id,
    protocolNumber: alert.protocol_number,
    assetType: 'POLE',
    status: 'RECEIVED',
    createdAt: alert.created_at.toISOString(),
    alert: alertResult,
  };
}
