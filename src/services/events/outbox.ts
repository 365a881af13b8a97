import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Event, EventType } from '../../../generated/partner/types.gen.js';
import type { Tx } from '../../db/database.js';
import type { AlertStatus } from '../../db/tables/domain.js';
import { insertDelivery } from '../../db/repositories/webhook-delivery.repository.js';
import { loadServiceOrder, serviceOrderView } from '../operations/index.js';
import { wakeDeliveries } from './dispatch.js';
import { heldActionOf, releaseHeldTouching } from './hold.js';

export interface EventSubject {
  alert: { id: string; tenant_id: string; external_system_id: string; protocol_number: string; alert_number: number; status: AlertStatus };
  /** The order the event is about; null for Alert.Cancelled. */
  serviceOrderId: string | null;
  /** The operator's note of the change (completion note, cancel or discard reason), when one was written. */
  note?: string | null;
}

/**
 * Writes one event to the outbox, in the caller's transaction, addressed to the
 * partner whose request the alert came from (N6), and returns its envelope; null when
 * that partner is not subscribed to the type (nothing is written).
 *
 * The envelope is built here, once, from the state inside the transaction, and stored
 * as the exact bytes both transports deliver. `sequence` increases per service order
 * (per alert when there is none), also for types the partner does not receive, so it
 * orders but is not contiguous. For a webhook-mode partner the delivery is written
 * in the same transaction, which wakes the delivery workers as it commits: it starts
 * the moment the transaction commits, and never if it rolls back.
 *
 * In the transaction of an action that may be undone (holdEventsFor), the event is
 * held instead (see hold.ts): written to held_event, delivered when the window passes.
 * Any event first releases the held events of other actions about the same alert or
 * order, so the partner receives them in the order they happened.
 *
 * Call it after updating the rows the event is about (the order is read here).
 */
export async function emitEvent(tx: Tx, type: EventType, subject: EventSubject): Promise<Event | null> {
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

  const partner = await tx
    .selectFrom('external_system')
    .select(['event_types', 'transport', 'webhook_url', 'enabled', sql<Date>`now()`.as('now')])
    .where('id', '=', alert.external_system_id)
    .executeTakeFirstOrThrow();
  if (partner.event_types !== null && !partner.event_types.includes(type)) return null;

  const envelope: Event = {
    eventId: randomUUID(),
    eventType: type,
    occurredAt: partner.now.toISOString(),
    protocolNumber: alert.protocol_number,
    serviceOrder,
    alert: { id: alert.id, alertNumber: alert.alert_number, status: alert.status },
    sequence,
    ...(subject.note ? { note: subject.note } : {}),
  };
  const body = JSON.stringify(envelope);
  const holding = heldActionOf(tx);
  await releaseHeldTouching(tx, alert.id, subject.serviceOrderId, holding);
  if (holding) {
    await tx
      .insertInto('held_event')
      .values({
        id: envelope.eventId,
        action_id: holding,
        tenant_id: alert.tenant_id,
        external_system_id: alert.external_system_id,
        event_type: type,
        alert_id: alert.id,
        service_order_id: subject.serviceOrderId,
        sequence,
        body,
        occurred_at: partner.now,
      })
      .execute();
    return envelope;
  }
  await tx
    .insertInto('event')
    .values({
      id: envelope.eventId,
      tenant_id: alert.tenant_id,
      external_system_id: alert.external_system_id,
      event_type: type,
      alert_id: alert.id,
      service_order_id: subject.serviceOrderId,
      sequence,
      payload: body,
      body,
      occurred_at: partner.now,
    })
    .execute();

  if (partner.transport === 'webhook' && partner.webhook_url !== null && partner.enabled) {
    const delivery = await insertDelivery(tx, {
      event_id: envelope.eventId,
      external_system_id: alert.external_system_id,
      ordering_key: subject.serviceOrderId ?? alert.id,
    });
    await wakeDeliveries(tx, delivery.blocked ? [delivery] : []);
  }
  return envelope;
}
