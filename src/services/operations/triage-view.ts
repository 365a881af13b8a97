import type { Alert } from '../../../generated/admin/types.gen.js';
import type { Language, Localized } from '../../lib/i18n.js';
import type { Executor } from '../../db/database.js';
import { attachmentResultsOf } from '../../db/repositories/intake/attachment.repository.js';
import type { AlertDetailRow, AlertRow, OrderRow } from '../../db/repositories/operations/triage.repository.js';

/** An alert as operators see it (openapi/admin `Alert`); the reason name follows the language. */
export function alertView(row: AlertDetailRow, lang: Language): Alert {
  return {
    id: row.id,
    alertNumber: row.alert_number,
    tenantId: row.tenant_id,
    partner: { id: row.external_system_id, code: row.partner_code },
    protocolNumber: row.protocol_number,
    status: row.status,
    reasonCode: row.reason_code,
    reasonName: (lang === 'en' ? row.reason_name_en : row.reason_name_pt) ?? row.reason_code,
    priority: row.priority,
    slaDueAt: row.sla_due_at.toISOString(),
    requestedAt: row.requested_at.toISOString(),
    requesterName: row.requester_name,
    requesterPhone: row.requester_phone,
    lampType: row.lamp_type,
    partnerReasonCode: row.partner_reason_code,
    description: row.description,
    additionalNotes: row.additional_notes,
    address: { street: row.address_street, number: row.address_number, neighborhood: row.address_neighborhood, reference: row.address_reference },
    latitude: row.latitude,
    longitude: row.longitude,
    locationSource: row.location_source,
    geolocated: row.latitude !== null,
    serviceOrder: row.service_order_id && row.order_number && row.order_status ? { id: row.service_order_id, number: row.order_number, status: row.order_status } : null,
    cancelReason: row.cancel_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    updatedByPartnerAt: row.updated_by_partner_at ? new Date(row.updated_by_partner_at).toISOString() : null,
  };
}

/**
 * Alerts as the triage inbox lists them: each with what triage needs in the same call,
 * its photos' results (ids to fetch them), how long it has waited and whether it is
 * past its SLA deadline.
 */
export async function inboxViews(db: Executor, rows: AlertDetailRow[], lang: Language): Promise<Alert[]> {
  const photos = await attachmentResultsOf(
    db,
    rows.map((r) => r.id),
  );
  const now = Date.now();
  return rows.map((r) => ({
    ...alertView(r, lang),
    ageMinutes: Math.max(0, Math.floor((now - r.created_at.getTime()) / 60_000)),
    overdue: (r.status === 'Pending' || r.status === 'Linked') && r.sla_due_at.getTime() < now,
    photos: photos
      .filter((p) => p.alert_id === r.id)
      .map((p) => ({ id: p.id, filename: p.filename, contentType: p.content_type, success: p.success, error: p.success ? null : (p.error_code ?? 'failed'), sizeBytes: p.size_bytes })),
  }));
}

/** The part of an alert the audit log keeps before and after an action. */
export function alertSnapshot(row: AlertRow): Record<string, unknown> {
  return {
    status: row.status,
    serviceOrderId: row.service_order_id,
    reasonCode: row.reason_code,
    priority: row.priority,
    slaDueAt: row.sla_due_at.toISOString(),
    latitude: row.latitude,
    longitude: row.longitude,
    locationSource: row.location_source,
    cancelReason: row.cancel_reason,
  };
}

/** The part of a service order the audit log keeps before and after an action. */
export function orderSnapshot(row: OrderRow): Record<string, unknown> {
  return {
    number: row.number,
    status: row.status,
    teamId: row.team_id,
    reasonCode: row.reason_code,
    priority: row.priority,
    slaDueAt: row.sla_due_at.toISOString(),
    latitude: row.latitude,
    longitude: row.longitude,
    closedAt: row.closed_at ? row.closed_at.toISOString() : null,
  };
}

/** Actions named in `invalid-transition` problems, in both languages. */
export const ACTION_NAMES = {
  createOrder: { 'pt-BR': 'criar uma ordem de serviço para o alerta', en: 'create a service order for the alert' },
  link: { 'pt-BR': 'vincular o alerta', en: 'link the alert' },
  discard: { 'pt-BR': 'descartar o alerta', en: 'discard the alert' },
  reclassify: { 'pt-BR': 'reclassificar o alerta', en: 'reclassify the alert' },
  setLocation: { 'pt-BR': 'definir a localização do alerta', en: 'set the location of the alert' },
  assign: { 'pt-BR': 'atribuir uma equipe à ordem de serviço', en: 'assign a team to the service order' },
  start: { 'pt-BR': 'iniciar a ordem de serviço', en: 'start the service order' },
  complete: { 'pt-BR': 'concluir a ordem de serviço', en: 'complete the service order' },
  planVisit: { 'pt-BR': 'planejar a visita da ordem de serviço', en: 'plan the visit of the service order' },
  cancel: { 'pt-BR': 'cancelar a ordem de serviço', en: 'cancel the service order' },
} as const satisfies Record<string, Localized>;

/** "Cannot link the alert to OS-2026-00042" and the like: an action about a named order. */
export function onOrder(action: Localized, number: string): Localized {
  return { 'pt-BR': `${action['pt-BR']} (${number})`, en: `${action.en} (${number})` };
}
