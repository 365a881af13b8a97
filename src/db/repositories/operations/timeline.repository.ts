import type { Executor } from '../../database.js';

export interface StatusRow {
  at: Date;
  from_status: string | null;
  to_status: string;
  actor: string;
  note: string | null;
}

export interface AuditRowLite {
  at: Date;
  actor: string;
  action: string;
  before: unknown;
  after: unknown;
  note: string | null;
}

export interface EventRowLite {
  id: string;
  at: Date;
  event_type: string;
  partner: string;
  sequence: number;
  /** The number of the alert the event is about (an order's events come from each of its alerts). */
  alert_number: number;
}

export interface DeliveryRowLite {
  id: string;
  event_id: string;
  created_at: Date;
  finished_at: Date | null;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  requested_by: string;
  redelivery_of: string | null;
}

/** At most this many rows of each kind: a timeline is read by a person. */
const CAP = 500;

export async function alertStatusRows(db: Executor, alertId: string): Promise<StatusRow[]> {
  return db.selectFrom('alert_status_history').select(['at', 'from_status', 'to_status', 'actor', 'note']).where('alert_id', '=', alertId).orderBy('id').limit(CAP).execute();
}

export async function orderStatusRows(db: Executor, orderId: string): Promise<StatusRow[]> {
  return db.selectFrom('service_order_status_history').select(['at', 'from_status', 'to_status', 'actor', 'note']).where('service_order_id', '=', orderId).orderBy('id').limit(CAP).execute();
}

export async function auditRowsOf(db: Executor, entityType: 'alert' | 'service_order', entityId: string): Promise<AuditRowLite[]> {
  return db.selectFrom('audit_log').select(['at', 'actor', 'action', 'before', 'after', 'note']).where('entity_type', '=', entityType).where('entity_id', '=', entityId).orderBy('id').limit(CAP).execute();
}

/** The outbox events of an alert, or of every alert of an order. */
export async function eventRowsOf(db: Executor, by: { alertId: string } | { orderId: string }): Promise<EventRowLite[]> {
  let q = db
    .selectFrom('event as e')
    .innerJoin('external_system as es', 'es.id', 'e.external_system_id')
    .innerJoin('alert as a', 'a.id', 'e.alert_id')
    .select(['e.id', 'e.created_at as at', 'e.event_type', 'es.code as partner', 'e.sequence', 'a.alert_number']);
  q = 'alertId' in by ? q.where('e.alert_id', '=', by.alertId) : q.where('e.service_order_id', '=', by.orderId);
  return q.orderBy('e.write_seq').limit(CAP).execute();
}

export async function deliveryRowsOf(db: Executor, eventIds: readonly string[]): Promise<DeliveryRowLite[]> {
  if (eventIds.length === 0) return [];
  return db
    .selectFrom('webhook_delivery')
    .select(['id', 'event_id', 'created_at', 'finished_at', 'status', 'attempts', 'last_status_code', 'last_error', 'requested_by', 'redelivery_of'])
    .where('event_id', 'in', eventIds)
    // event_id is null only for a test event's delivery (0031), which this filter never matches
    .$narrowType<{ event_id: string }>()
    .orderBy('position')
    .limit(CAP)
    .execute();
}
