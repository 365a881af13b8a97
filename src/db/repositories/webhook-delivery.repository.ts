import { sql, type Selectable } from 'kysely';
import type { Executor, Tx } from '../database.js';
import type { DeliveryStatus, WebhookAttemptTable, WebhookDeliveryTable } from '../tables/events.js';

export type DeliveryRow = Selectable<WebhookDeliveryTable>;
export type AttemptRow = Selectable<WebhookAttemptTable>;

const OPEN: DeliveryStatus[] = ['pending', 'failed'];

export async function insertDelivery(
  tx: Tx,
  values: { event_id: string; external_system_id: string; ordering_key: string; requested_by?: string; redelivery_of?: string | null },
): Promise<DeliveryRow> {
  return tx.insertInto('webhook_delivery').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * Takes the lease of a delivery for one attempt, only if it is open, due, not leased
 * and first among the open deliveries of its ordering key (so events of one order go
 * out one at a time, in order). One statement: two workers holding jobs for the same
 * delivery cannot both get it.
 *
 *   UPDATE webhook_delivery d SET lease_until = now() + $lease * interval '1 millisecond'
 *   WHERE d.id = $id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
 *     AND (d.lease_until IS NULL OR d.lease_until < now())
 *     AND NOT EXISTS (SELECT 1 FROM webhook_delivery p
 *                     WHERE p.external_system_id = d.external_system_id AND p.ordering_key = d.ordering_key
 *                       AND p.position < d.position AND p.status IN ('pending', 'failed'))
 *   RETURNING *
 *
 * (the NOT EXISTS probe walks webhook_delivery_open_key_idx, which holds open deliveries only)
 */
export async function claimDelivery(db: Executor, id: string, leaseMs: number): Promise<DeliveryRow | undefined> {
  return db
    .updateTable('webhook_delivery as d')
    .set({ lease_until: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'` })
    .where('d.id', '=', id)
    .where('d.status', 'in', OPEN)
    .where('d.next_attempt_at', '<=', sql<Date>`now()`)
    .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<', sql<Date>`now()`)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_delivery as p')
            .select(sql`1`.as('one'))
            .whereRef('p.external_system_id', '=', 'd.external_system_id')
            .whereRef('p.ordering_key', '=', 'd.ordering_key')
            .whereRef('p.position', '<', 'd.position')
            .where('p.status', 'in', OPEN),
        ),
      ),
    )
    .returningAll()
    .executeTakeFirst();
}

/** What an attempt sends: the stored envelope bytes and the partner's current webhook settings. */
export async function loadDeliveryTarget(db: Executor, deliveryId: string) {
  return db
    .selectFrom('webhook_delivery as d')
    .innerJoin('event as e', 'e.id', 'd.event_id')
    .innerJoin('external_system as x', 'x.id', 'd.external_system_id')
    .select([
      'd.id',
      'e.id as event_id',
      'e.event_type',
      sql<string>`coalesce(e.body, e.payload::text)`.as('body'),
      'x.code as partner_code',
      'x.enabled',
      'x.transport',
      'x.webhook_url',
      'x.webhook_secret_enc',
    ])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

export async function insertAttempt(tx: Tx, values: Omit<AttemptRow, 'id'>): Promise<void> {
  await tx.insertInto('webhook_attempt').values(values).execute();
}

/** Records the outcome of the attempt the lease was taken for; releases the lease. */
export async function settleDelivery(
  tx: Tx,
  id: string,
  values: { status: DeliveryStatus; attempts: number; next_attempt_at?: Date; last_attempt_at: Date; last_status_code: number | null; last_error: string | null; finished: boolean },
): Promise<void> {
  await tx
    .updateTable('webhook_delivery')
    .set({
      status: values.status,
      attempts: values.attempts,
      ...(values.next_attempt_at ? { next_attempt_at: values.next_attempt_at } : {}),
      last_attempt_at: values.last_attempt_at,
      last_status_code: values.last_status_code,
      last_error: values.last_error,
      lease_until: null,
      finished_at: values.finished ? sql<Date>`now()` : null,
    })
    .where('id', '=', id)
    .execute();
}

/** The first open delivery of an ordering key: the one that may go out next. */
export async function headOfKey(db: Executor, externalSystemId: string, orderingKey: string): Promise<Pick<DeliveryRow, 'id' | 'next_attempt_at'> | undefined> {
  return db
    .selectFrom('webhook_delivery')
    .select(['id', 'next_attempt_at'])
    .where('external_system_id', '=', externalSystemId)
    .where('ordering_key', '=', orderingKey)
    .where('status', 'in', OPEN)
    .orderBy('position')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Open deliveries that are due since before `dueBefore`, not leased, and first in their
 * key: ones whose job was lost (a crash, a database without the job queue). The
 * sweeper enqueues them again.
 */
export async function strandedDeliveries(db: Executor, dueBefore: Date, limit: number): Promise<Pick<DeliveryRow, 'id'>[]> {
  return db
    .selectFrom('webhook_delivery as d')
    .select('d.id')
    .where('d.status', 'in', OPEN)
    .where('d.next_attempt_at', '<', dueBefore)
    .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<', sql<Date>`now()`)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_delivery as p')
            .select(sql`1`.as('one'))
            .whereRef('p.external_system_id', '=', 'd.external_system_id')
            .whereRef('p.ordering_key', '=', 'd.ordering_key')
            .whereRef('p.position', '<', 'd.position')
            .where('p.status', 'in', OPEN),
        ),
      ),
    )
    .orderBy('d.next_attempt_at')
    .limit(limit)
    .execute();
}

export interface DeliveryFilter {
  externalSystemId: string;
  /** Just this delivery. */
  id?: string;
  status?: DeliveryStatus;
  /** Deliveries created at or after this instant. */
  since?: Date;
  limit: number;
}

/** A partner's deliveries, newest first, with their event. */
export async function listDeliveries(db: Executor, f: DeliveryFilter) {
  let q = db
    .selectFrom('webhook_delivery as d')
    .innerJoin('event as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.event_id',
      'e.event_type',
      'e.occurred_at',
      'e.service_order_id',
      'e.alert_id',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.last_attempt_at',
      'd.last_status_code',
      'd.last_error',
      'd.redelivery_of',
      'd.requested_by',
      'd.created_at',
      'd.finished_at',
    ])
    .where('d.external_system_id', '=', f.externalSystemId);
  if (f.id) q = q.where('d.id', '=', f.id);
  if (f.status) q = q.where('d.status', '=', f.status);
  if (f.since) q = q.where('d.created_at', '>=', f.since);
  return q.orderBy('d.position', 'desc').limit(f.limit).execute();
}

export async function attemptsOf(db: Executor, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db.selectFrom('webhook_attempt').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('delivery_id').orderBy('attempt').execute();
}

export async function findDelivery(db: Executor, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_delivery').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Whether an event already has a delivery to this partner that is still open. */
export async function hasOpenDelivery(db: Executor, eventId: string): Promise<boolean> {
  const row = await db.selectFrom('webhook_delivery').select('id').where('event_id', '=', eventId).where('status', 'in', OPEN).limit(1).executeTakeFirst();
  return row !== undefined;
}
