import type { IntakeResponse } from '../../../generated/partner/types.gen.js';
import type { RuntimeDeps } from '../deps.js';
import type { Tx } from '../../db/database.js';
import type { LocationSource } from '../../db/tables/domain.js';
import type { IntakeSetting } from '../../db/repositories/intake/request.repository.js';
import { touchAlert, updateAlert, type AlertPatch, type AlertRow, type VersionedAlertRow } from '../../db/repositories/intake/alert.repository.js';
import { insertAudit } from '../../db/repositories/audit.repository.js';
import { insertAlertAttachment, insertAttachmentFailure, listAlertAttachments, updateAlertAttachment } from '../../db/repositories/intake/attachment.repository.js';
import type { ReasonRow } from '../../db/repositories/operations/reason.repository.js';
import type { Language } from '../../lib/i18n.js';
import type { PreparedAttachment, PreparedAttachments } from '../attachments/index.js';
import { attachmentResult, buildIntakeResponse } from './response.js';
import type { IntakeInput } from './validate.js';

// The writes of a resend, inside the request's transaction, once the slow work is done
// and the advisory locks are held, and what intake's writes share. A new alert is
// written by intake/create.ts.

export interface IntakeResult {
  status: 200 | 201;
  body: IntakeResponse;
}

/** Who the request comes from and where it goes, read once per request. */
export interface IntakeContext {
  caller: { externalSystemId: string; tenantId: string; scopes: readonly string[] };
  tenant: IntakeSetting['tenant'];
  /** Status-history actor: partner:<code>. */
  actor: string;
  /** A service order is created at once: automatic policy and the canCreateServiceOrders scope (N3). */
  automatic: boolean;
  /** The internal reason the request's reasonCode maps to, read once with the rest of the context (a resend of a Pending alert uses it too). */
  reason: ReasonRow;
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

/**
 * A known protocolNumber (N1): the mutable fields of the alert's state are updated
 * when they changed; nothing is written when none did. Pending: requester, problem,
 * lampType, reasonCode (mapped again), address (located again when it moved), new
 * attachments. Linked: requester, problem, lampType, address.reference, new
 * attachments. Resolved and Cancelled: nothing. assetType and requestedAt: never.
 */
export async function applyResend(tx: Tx, deps: RuntimeDeps, ctx: IntakeContext, input: IntakeInput, current: VersionedAlertRow, plan: Plan, lang: Language): Promise<IntakeResult> {
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
        const reason = ctx.reason;
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
    await auditPartnerUpdate(tx, ctx, current, alert);
    if (relocate) await deps.jobs.enqueueGeocode(tx, current.id, deps.config);
  }
  const rows = await listAlertAttachments(tx, alert.id);
  const known = alert.reason_code === ctx.reason.code ? ctx.reason : undefined;
  return { status: 200, body: await buildIntakeResponse(tx, alert, lang, rows.map((r) => attachmentResult(r, lang)), known) };
}

/** What operators see change when a partner resends: the problem and where it is. */
const WATCHED = {
  description: 'description',
  street: 'address_street',
  number: 'address_number',
  neighborhood: 'address_neighborhood',
  reference: 'address_reference',
  latitude: 'latitude',
  longitude: 'longitude',
} as const satisfies Record<string, keyof AlertRow>;

/**
 * A resend that changed the description or the location leaves an audit entry
 * (`alert.partner-update`, only the changed fields before and after) in the resend's
 * transaction, so an operator about to act on the alert sees what the partner changed.
 */
async function auditPartnerUpdate(tx: Tx, ctx: IntakeContext, before: AlertRow, after: AlertRow): Promise<void> {
  const from: Record<string, unknown> = {};
  const to: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(WATCHED)) {
    if (before[column] === after[column]) continue;
    from[field] = before[column];
    to[field] = after[column];
  }
  if (Object.keys(to).length === 0) return;
  await insertAudit(tx, {
    tenant_id: before.tenant_id,
    actor: ctx.actor,
    admin_token_id: null,
    operator_id: null,
    action: 'alert.partner-update',
    entity_type: 'alert',
    entity_id: before.id,
    before: JSON.stringify(from),
    after: JSON.stringify(to),
    note: null,
    request_id: null,
  });
}

/** Records the prepared attachments; true when anything was written. */
export async function writeAttachments(tx: Tx, ctx: IntakeContext, alert: Pick<AlertRow, 'id' | 'tenant_id' | 'protocol_number'>, items: readonly PreparedAttachment[]): Promise<boolean> {
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
