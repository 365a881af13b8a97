import { randomUUID } from 'node:crypto';
import type { AttachmentResult, IntakeResponse } from '../../../generated/partner/types.gen.js';
import type { RuntimeDeps } from '../deps.js';
import { allocateNumbers, type AllocatedNumbers } from '../../db/repositories/counter.repository.js';
import { insertNewIntake, type NewIntake } from '../../db/repositories/intake/request.repository.js';
import type { Language } from '../../lib/i18n.js';
import type { AttachmentRowInsert, PreparedAttachment } from '../attachments/index.js';
import { orderAddress, writeAttachments, type IntakeContext, type IntakeResult, type Plan } from './apply.js';
import { attachmentResult, intakeResponseOf, type AttachmentResultRow } from './response.js';
import type { IntakeInput } from './validate.js';

/**
 * A request whose protocolNumber is new: the alert (and in automatic mode its order),
 * written once the slow work is done. The numbers were taken by the request's first
 * read (findIntakeStart: only for a request found new, so a replay or a resend never
 * takes one), else here in a statement of their own (allocateNumbers, a later round);
 * a request that then fails to write leaves its numbers unused. The rows, the order's
 * nearest pole and the stored response are one statement; only attachments and a
 * geocoding job need a transaction around it. The usual request is therefore two
 * round trips after authentication: the first read with the numbers, and the write.
 */
export async function createIntake(
  deps: RuntimeDeps,
  ctx: IntakeContext,
  input: IntakeInput,
  idem: { key: string | null; hash: Buffer | null },
  plan: Plan,
  lang: Language,
  /** Taken by the request's first read; null: take them now. */
  taken: AllocatedNumbers | null = null,
): Promise<IntakeResult> {
  const tenantId = ctx.tenant.id;
  const reason = ctx.reason;
  const numbers = taken ?? (await allocateNumbers(deps.db, tenantId, { alert: true, serviceOrder: ctx.automatic }));
  if (numbers.alertNumber === null || (numbers.serviceOrderNumber !== null) !== ctx.automatic) throw new Error('the numbers taken do not match the request (an alert number, and an order number exactly in automatic mode)');
  const location = plan.location ?? null;
  const order = numbers.serviceOrderNumber
    ? {
        id: randomUUID(),
        tenant_id: tenantId,
        number: numbers.serviceOrderNumber,
        priority: reason.priority,
        reason_code: reason.code,
        address: orderAddress(input.address),
        neighborhood: input.address.neighborhood,
        latitude: location?.latitude ?? null,
        longitude: location?.longitude ?? null,
        pole_id: null,
        team_id: null,
        closed_at: null,
      }
    : null;
  const alert = {
    id: plan.alertId,
    tenant_id: tenantId,
    external_system_id: ctx.caller.externalSystemId,
    protocol_number: input.protocolNumber,
    alert_number: numbers.alertNumber!,
    status: order ? ('Linked' as const) : ('Pending' as const),
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
    service_order_id: order?.id ?? null,
    cancel_reason: null,
  };
  const reasonName = lang === 'en' ? reason.name_en : reason.name_pt;
  const body = intakeResponseOf(alert, reasonName, order, '', attachmentResults(plan.attachments.items, lang));
  const write: NewIntake = {
    order,
    alert,
    slaHours: reason.sla_hours,
    // An automatic order sits on the nearest pole of the request's coordinates, when one is close enough.
    nearPole: order && location ? { latitude: location.latitude, longitude: location.longitude, meters: deps.config.poleMatchMeters } : null,
    actor: ctx.actor,
    orderNote: `created at intake of ${input.protocolNumber}`,
    idempotency: idem.key ? { external_system_id: ctx.caller.externalSystemId, key: idem.key, request_hash: idem.hash! } : null,
    response: cutAtCreatedAt(body),
  };

  // Nothing else to write (the usual request): the statement commits on its own.
  const oneStatement = plan.attachments.items.length === 0 && location !== null;
  const text = oneStatement
    ? await insertNewIntake(deps.db, write)
    : await deps.db.transaction().execute(async (tx) => {
        const written = await insertNewIntake(tx, write);
        await writeAttachments(tx, ctx, alert, plan.attachments.items);
        if (location === null) await deps.jobs.enqueueGeocode(tx, alert.id, deps.config);
        return written;
      });
  return { status: 201, body: JSON.parse(text) as IntakeResponse };
}

/** The body's JSON text before and after the value of `createdAt` (a random marker stands in for it). */
function cutAtCreatedAt(body: IntakeResponse): NewIntake['response'] {
  const marker = JSON.stringify(randomUUID());
  const text = JSON.stringify({ ...body, createdAt: JSON.parse(marker) as string });
  const at = text.indexOf(marker);
  return { before: text.slice(0, at), after: text.slice(at + marker.length) };
}

/**
 * The attachment results of a new alert, from the rows about to be inserted: every
 * item is a new row or the same content as an earlier item of this request.
 */
function attachmentResults(items: readonly PreparedAttachment[], lang: Language): AttachmentResult[] {
  const rows = new Map<string, AttachmentRowInsert>();
  for (const item of items) if (item.action.kind === 'insert') rows.set(item.action.row.id, item.action.row);
  return items.map((item) => {
    const id = item.action.kind === 'insert' ? item.action.row.id : item.action.kind === 'existing' ? item.action.id : null;
    const row = id === null ? undefined : rows.get(id);
    if (!row) throw new Error(`attachment ${item.index} of a new alert refers to no row of the request`);
    return attachmentResult(asStored(row), lang, { filename: item.input.filename, contentType: item.input.contentType });
  });
}

/** An attachment row as a read would return it (error_params is inserted as JSON text). */
function asStored(row: AttachmentRowInsert): AttachmentResultRow {
  return {
    success: row.success,
    blob_path: row.blob_path ?? null,
    filename: row.filename ?? null,
    content_type: row.content_type,
    size_bytes: row.size_bytes ?? null,
    error_code: row.error_code ?? null,
    error_params: row.error_params ? (JSON.parse(row.error_params) as Record<string, string | number>) : null,
  };
}
