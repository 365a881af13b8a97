import type { Event, EventType } from '../../generated/partner/types.gen.js';
import type { Tx } from '../db/database.js';
import type { AlertStatus } from '../db/tables/domain.js';
import { loadServiceOrder, serviceOrderView } from './service-order.view.js';

export interface EventSubject {
  alert: { id: string; tenant_id: string; external_system_id: string; protocol_number: string; alert_number: number; status: AlertStatus };
  /** The order the event is about; null for Alert.Cancelled. */
  serviceOrderId: string | null;
}

/**
 * Writes one event to the outbox, in the caller's transaction, addressed to the
 * partner whose request the alert came from (N6). The envelope is built here, once,
 * from the state inside the transaction: webhook and polling deliver these bytes.
 * `sequence` increases per service order (per alert when there is none).
 */
export async function emitEvent(tx: Tx, type: EventType, subject: EventSubject): Promise<Event> {
  const { alert } = subject;
  let sequence: number;
  let serviceOrder: Event['serviceOrder'] = null;
  if (subject.serviceOrderId) {
    const seq = await tx.updateTable('service_order').set((eb) => ({ event_seq: eb('event_seq', '+', 1) })).where('id', '=', subject.serviceOrderId).returning('event_seq').executeTakeFirstOrThrow();
    sequence = seq.event_seq;
    const row = await loadServiceOrder(tx, subject.serviceOrderId);
    serviceOrder = row ? serviceOrderView(row) : null;
  } else {
    const seq = await tx.updateTable('alert').set((eb) => ({ event_seq: eb('event_seq', '+', 1) })).where('id', '=', alert.id).returning('event_seq').executeTakeFirstOrThrow();
    sequence = seq.event_seq;
  }
  const inserted = await tx
    .insertInto('event')
    .values({
      tenant_id: alert.tenant_id,
      external_system_id: alert.external_system_id,
      event_type: type,
      alert_id: alert.id,
      service_order_id: subject.serviceOrderId,
      sequence,
      payload: '{}',
    })
    .returning(['id', 'occurred_at'])
    .executeTakeFirstOrThrow();
  const envelope: Event = {
    eventId: inserted.id,
    eventType: type,
    occurredAt: inserted.occurred_at.toISOString(),
    protocolNumber: alert.protocol_number,
    serviceOrder,
    alert: { id: alert.id, alertNumber: alert.alert_number, status: alert.status },
    sequence,
  };
  await tx.updateTable('event').set({ payload: JSON.stringify(envelope) }).where('id', '=', inserted.id).execute();
  return envelope;
}
