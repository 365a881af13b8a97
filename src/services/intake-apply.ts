import type { AttachmentResult, IntakeResponse } from '../../generated/partner/types.gen.js';
import type { AppDeps } from '../app-deps.js';
import type { Tx } from '../db/database.js';
import type { LocationSource } from '../db/tables/domain.js';
import type { TenantRow } from '../db/repositories/tenant.repository.js';
import { nextAlertNumber, nextServiceOrderNumber } from '../db/repositories/counter.repository.js';
import { insertAlert, insertAlertStatusHistory, touchAlert, updateAlert, type AlertPatch, type AlertRow, type VersionedAlertRow } from '../db/repositories/alert.repository.js';
import { insertAlertAttachment, insertAttachmentFailure, listAlertAttachments, updateAlertAttachment, type AlertAttachmentRow } from '../db/repositories/attachment.repository.js';
import { resolveReason } from '../db/repositories/reason.repository.js';
import { insertServiceOrder, insertServiceOrderStatusHistory } from '../db/repositories/service-order.repository.js';
import { enqueueGeocode } from '../jobs/geocode.job.js';
import type { Language } from '../lib/i18n.js';
import type { PreparedAttachment, PreparedAttachments } from './attachments/prepare.js';
import { attachmentResult, buildIntakeResponse } from './intake-response.js';
import type { IntakeInput } from './intake-validate.js';

// The writes of intake, inside the request's transaction, once the slow work is done
// and the advisory locks are held: a new alert (and its order), or a resend's changes.

export interface IntakeResult {
  status: 200 | 201;
  body: IntakeResponse;
}

/** Who the request comes from and where it goes, read once per request. */
export interface IntakeContext {
  caller: { externalSystemId: string; tenantId: string; scopes: readonly string[] };
  tenant: TenantRow;
  /** Status-history actor: partner:<code>. */
  actor: string;
  /** A service order is created at once: automatic policy and the canCreateServiceOrders scope (N3). */
  automatic: boolean;
}

/** Coordinates decided before the transaction; undefined = keep what the alert has. */
export type LocationPlan = { latitude: number; longitude: number; source: LocationSource } | null | undefined;

/** What the slow work prepared for the transaction. */
export interface Plan {
  alertId: string;
  location: LocationPlan;
  attachments: PreparedAttachments;
}

export const isClosed = (status: AlertRow['status']): boolean => status === 'Resolved' || status === 'Cancelled';

/** "Rua Augusta, 1500": the order's address line from street and number. */
export function orderAddress(address: IntakeInput['address']): string {
  const number = address.number?.trim();
  return number ? `${address.street}, ${number}` : address.street;
}

export async function applyCreate(tx: Tx, deps: AppDeps, ctx: IntakeContext, input: IntakeInput, plan: Plan, lang: Language): Promise<IntakeResult> {
  const tenantId = ctx.tenant.id;
  const reason = await resolveReason(tx, ctx.caller.externalSystemId, tenantId, input.reasonCode);
  const location = plan.location ?? null;
  const alertNumber = await nextAlertNumber(tx, tenantId);
  let serviceOrderId: string | null = null;
  if (ctx.automatic) {
    const number = await nextServiceOrderNumber(tx, tenantId);
    const order = await insertServiceOrder(
      tx,
      {
        tenant_id: tenantId,
        number,
        status: 'OPEN',
        priority: reason.priority,
        reason_code: reason.code,
        address: orderAddress(input.address),
        neighborhood: input.address.neighborhood,
        latitude: location?.latitude ?? null,
        longitude: location?.longitude ?? null,
        pole_id: null,
        team_id: null,
        closed_at: null,
      },
      reason.sla_hours,
    );
    await insertServiceOrderStatusHistory(tx, { service_order_id: order.id, from_status: null, to_status: 'OPEN', actor: ctx.actor, note: `created at intake of ${input.protocolNumber}` });
    serviceOrderId = order.id;
  }
  const alert = await insertAlert(
    tx,
    {
      id: plan.alertId,
      tenant_id: tenantId,
      external_system_id: ctx.caller.externalSystemId,
      protocol_number: input.protocolNumber,
      alert_number: alertNumber,
      status: ctx.automatic ? 'Linked' : 'Pending',
      requested_at: input.requestedAt,
      requester_name: input.requester.name,
      requester_phone: input.requester.phone,
      lamp_type: input.lampType,
      partner_reason_code: input.reasonCode,
      reason_code: reason.code,
      priority: reason.priority,
      address_street: input.address.street,
      address_number: input.address.number,
      address_neighborhood: input.address.neighborhood,
      address_reference: input.address.reference,
      latitude: location?.latitude ?? null,
      longitude: location?.longitude ?? null,
      location_source: location?.source ?? null,
      description: input.problem.description,
      additional_notes: input.problem.additionalNotes,
      service_order_id: serviceOrderId,
      cancel_reason: null,
    },
    reason.sla_hours,
  );
  await insertAlertStatusHistory(tx, { alert_id: alert.id, from_status: null, to_status: alert.status, actor: ctx.actor });
  await writeAttachments(tx, ctx, alert, plan.attachments.items);
  if (location === null) await enqueueGeocode(deps, tx, alert.id);

  const rows = new Map((await listAlertAttachments(tx, alert.id)).map((r) => [r.id, r]));
  const results = plan.attachments.items.map((item) => resultForRequest(rows, item, lang));
  return { status: 201, body: await buildIntakeResponse(tx, alert, lang, results) };
}

/**
 * A known protocolNumber (N1): the mutable fields of the alert's state are updated
 * when they changed; nothing is written when none did. Pending: requester, problem,
 * lampType, reasonCode (mapped again), address (located again when it moved), new
 * attachments. Linked: requester, problem, lampType, address.reference, new
 * attachments. Resolved and Cancelled: nothing. assetType and requestedAt: never.
 */
export async function applyResend(tx: Tx, deps: AppDeps, ctx: IntakeContext, input: IntakeInput, current: VersionedAlertRow, plan: Plan, lang: Language): Promise<IntakeResult> {
  let alert: AlertRow = current;
  if (!isClosed(current.status)) {
    const patch: AlertPatch = {};
    const set = <K extends keyof AlertPatch & keyof AlertRow>(column: K, value: AlertRow[K]): void => {
      if (current[column] !== value) (patch as Record<string, unknown>)[column] = value;
    };
    set('requester_name', input.requester.name);
    set('requester_phone', input.requester.phone);
    set('description', input.problem.description);
    set('additional_notes', input.problem.additionalNotes);
    set('lamp_type', input.lampType);
    set('address_reference', input.address.reference);
    let relocate = false;
    if (current.status === 'Pending') {
      if (input.reasonCode !== current.partner_reason_code) {
        patch.partner_reason_code = input.reasonCode;
        const reason = await resolveReason(tx, ctx.caller.externalSystemId, ctx.tenant.id, input.reasonCode);
        if (reason.code !== current.reason_code) {
          patch.reason_code = reason.code;
          patch.priority = reason.priority;
          patch.slaHoursFromCreation = reason.sla_hours;
        }
      }
      set('address_street', input.address.street);
      set('address_number', input.address.number);
      set('address_neighborhood', input.address.neighborhood);
      if (plan.location !== undefined) {
        patch.latitude = plan.location?.latitude ?? null;
        patch.longitude = plan.location?.longitude ?? null;
        patch.location_source = plan.location?.source ?? null;
        relocate = plan.location === null;
      }
    }
    const wroteAttachments = await writeAttachments(tx, ctx, current, plan.attachments.items);
    if (Object.keys(patch).length > 0) alert = await updateAlert(tx, current.id, patch);
    else if (wroteAttachments) await touchAlert(tx, current.id);
    if (relocate) await enqueueGeocode(deps, tx, current.id);
  }
  const rows = await listAlertAttachments(tx, alert.id);
  return { status: 200, body: await buildIntakeResponse(tx, alert, lang, rows.map((r) => attachmentResult(r, lang))) };
}

/** Records the prepared attachments; true when anything was written. */
async function writeAttachments(tx: Tx, ctx: IntakeContext, alert: AlertRow, items: readonly PreparedAttachment[]): Promise<boolean> {
  let wrote = false;
  for (const item of items) {
    const action = item.action;
    if (action.kind === 'insert') {
      await insertAlertAttachment(tx, { ...action.row, alert_id: alert.id, tenant_id: alert.tenant_id });
      if (item.failure) {
        await insertAttachmentFailure(tx, {
          tenant_id: alert.tenant_id,
          external_system_id: ctx.caller.externalSystemId,
          alert_id: alert.id,
          attachment_id: action.row.id,
          protocol_number: alert.protocol_number,
          url: item.failure.url,
          filename: item.input.filename,
          content_type: item.input.contentType,
          error_code: item.failure.code,
          detail: item.failure.detail,
          attempts: item.failure.attempts,
        });
      }
      wrote = true;
    } else if (action.kind === 'store-failed') {
      await updateAlertAttachment(tx, action.id, action.patch);
      wrote = true;
    }
  }
  return wrote;
}

/** The result of one attachment of this request: the row it landed in, with this request's filename and type. */
function resultForRequest(rows: ReadonlyMap<string, AlertAttachmentRow>, item: PreparedAttachment, lang: Language): AttachmentResult {
  const id = item.action.kind === 'insert' ? item.action.row.id : item.action.id;
  const row = rows.get(id);
  if (!row) throw new Error(`attachment ${id} of the request is not recorded`);
  return attachmentResult(row, lang, { filename: item.input.filename, contentType: item.input.contentType });
}
