import type { AttachmentResult, IntakeResponse } from '../../../generated/partner/types.gen.js';
import type { Executor } from '../../db/database.js';
import type { AlertRow } from '../../db/repositories/intake/alert.repository.js';
import type { ServiceOrderRow } from '../../db/repositories/operations/service-order.repository.js';
import type { AlertAttachmentRow } from '../../db/repositories/intake/attachment.repository.js';
import { findReason, type ReasonRow } from '../../db/repositories/operations/reason.repository.js';
import type { Language } from '../../lib/i18n.js';
import { attachmentErrorMessage } from '../attachments/index.js';

/** What an attachment result shows of its row. */
export type AttachmentResultRow = Pick<AlertAttachmentRow, 'success' | 'blob_path' | 'filename' | 'content_type' | 'size_bytes' | 'error_code' | 'error_params'>;

/** One attachment result (2.6). `echo` overrides filename/contentType with what this request sent. */
export function attachmentResult(row: AttachmentResultRow, lang: Language, echo?: { filename: string | null; contentType: string }): AttachmentResult {
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
export async function buildIntakeResponse(
  db: Executor,
  alert: AlertRow,
  lang: Language,
  attachments: AttachmentResult[],
  /** The alert's reason when the caller already holds it (not read again). */
  knownReason?: Pick<ReasonRow, 'code' | 'name_pt' | 'name_en'>,
): Promise<IntakeResponse> {
  const reason = knownReason?.code === alert.reason_code ? knownReason : await findReason(db, alert.tenant_id, alert.reason_code);
  const order = alert.service_order_id
    ? await db.selectFrom('service_order').select(['id', 'number', 'priority', 'created_at']).where('id', '=', alert.service_order_id).executeTakeFirstOrThrow()
    : null;
  const reasonName = reason ? (lang === 'en' ? reason.name_en : reason.name_pt) : alert.reason_code;
  return intakeResponseOf(alert, reasonName, order, (order ?? alert).created_at.toISOString(), attachments);
}

/** The alert's fields a 2.6 body shows. */
export type ResponseAlert = Pick<
  AlertRow,
  'id' | 'protocol_number' | 'alert_number' | 'reason_code' | 'requester_name' | 'requester_phone' | 'description' | 'additional_notes' | 'lamp_type' | 'requested_at' | 'latitude' | 'longitude' | 'status'
>;

/** The 2.6 body from values already known; `createdAt` is the order's creation time, else the alert's. */
export function intakeResponseOf(
  alert: ResponseAlert,
  reasonName: string,
  order: Pick<ServiceOrderRow, 'id' | 'number' | 'priority'> | null,
  createdAt: string,
  attachments: AttachmentResult[],
): IntakeResponse {
  const alertResult: IntakeResponse['alert'] = {
    id: alert.id,
    alertNumber: alert.alert_number,
    alertReasonCode: alert.reason_code,
    alertReasonName: reasonName,
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
      createdAt,
      alert: alertResult,
    };
  }
  return {
    id: alert.id,
    protocolNumber: alert.protocol_number,
    assetType: 'POLE',
    status: 'RECEIVED',
    createdAt,
    alert: alertResult,
  };
}
