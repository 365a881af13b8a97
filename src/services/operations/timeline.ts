import type { Timeline, TimelineEntry } from '../../../generated/admin/types.gen.js';
import type { Executor } from '../../db/database.js';
import { alertStatusRows, auditRowsOf, deliveryRowsOf, eventRowsOf, orderStatusRows, type StatusRow } from '../../db/repositories/operations/timeline.repository.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { Ref } from './resolve.js';

/**
 * One alert's or one order's story, oldest first: status changes, audit entries (who
 * changed what, before and after), the events sent to partners and what became of
 * each delivery. Entries of the same instant keep that order (status, audit, event,
 * delivery), which is the order they were written in.
 */
const KIND_ORDER: Record<TimelineEntry['kind'], number> = { status: 0, audit: 1, event: 2, delivery: 3 };

function statusEntries(rows: StatusRow[]): TimelineEntry[] {
  return rows.map((r) => ({ at: r.at.toISOString(), kind: 'status', actor: r.actor, title: r.from_status ? `${r.from_status} -> ${r.to_status}` : r.to_status, note: r.note, data: { from: r.from_status, to: r.to_status } }));
}

async function entriesOf(db: Executor, status: StatusRow[], entity: 'alert' | 'service_order', ref: Ref): Promise<TimelineEntry[]> {
  const [audit, events] = await Promise.all([auditRowsOf(db, entity, ref.id), eventRowsOf(db, entity === 'alert' ? { alertId: ref.id } : { orderId: ref.id })]);
  const deliveries = await deliveryRowsOf(db, events.map((e) => e.id));
  const eventType = new Map(events.map((e) => [e.id, e]));
  const out: TimelineEntry[] = [
    ...statusEntries(status),
    ...audit.map((a): TimelineEntry => ({ at: a.at.toISOString(), kind: 'audit', actor: a.actor, title: a.action, note: a.note, data: { before: a.before ?? null, after: a.after ?? null } })),
    ...events.map((e): TimelineEntry => ({ at: e.at.toISOString(), kind: 'event', actor: null, title: e.event_type, note: null, data: { eventId: e.id, partner: e.partner, sequence: e.sequence, alertNumber: e.alert_number } })),
    ...deliveries.map((d): TimelineEntry => ({
      at: (d.finished_at ?? d.created_at).toISOString(),
      kind: 'delivery',
      actor: d.requested_by === 'event' ? null : d.requested_by,
      title: `${eventType.get(d.event_id)?.event_type ?? 'event'} delivery ${d.status}`,
      note: d.last_error,
      data: { deliveryId: d.id, eventId: d.event_id, partner: eventType.get(d.event_id)?.partner ?? null, alertNumber: eventType.get(d.event_id)?.alert_number ?? null, status: d.status, attempts: d.attempts, lastStatusCode: d.last_status_code, redeliveryOf: d.redelivery_of },
    })),
  ];
  return out.sort((a, b) => a.at.localeCompare(b.at) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind]);
}

export async function alertTimeline(db: Executor, access: AdminAccess, ref: Ref): Promise<Timeline> {
  requireTenantRole(access, ref.tenantId, 'viewer', `alert ${ref.id}`);
  return { items: await entriesOf(db, await alertStatusRows(db, ref.id), 'alert', ref) };
}

export async function orderTimeline(db: Executor, access: AdminAccess, ref: Ref): Promise<Timeline> {
  requireTenantRole(access, ref.tenantId, 'viewer', `service order ${ref.id}`);
  return { items: await entriesOf(db, await orderStatusRows(db, ref.id), 'service_order', ref) };
}
