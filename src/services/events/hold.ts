import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Tx } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { insertDelivery, type OrderingKey } from '../../db/repositories/webhook-delivery.repository.js';
import { wakeDeliveries } from './dispatch.js';

/**
 * Events held back while the operator action that wrote them may still be undone
 * (issue 23 §2, 0092). An action that may be undone names itself on its transaction
 * (holdEventsFor); every event emitEvent writes in that transaction then goes to
 * held_event instead of the outbox. Held events are not delivered and not in the
 * events page: to the partner they do not exist yet.
 *
 * They reach the outbox by release, in one transaction that inserts them into `event`
 * (same ids, envelopes byte for byte, write order kept), writes a delivery for a
 * webhook partner, deletes them from held_event and marks the action released:
 * - when the window passes (releaseDueActions, run by the webhook pump of every serving
 *   process about once a second, and by an events poll that finds one due before it
 *   reads: lumen_poll_events reports it, migration 0102);
 * - at once, when a later event is written about the same alert or order (its partner
 *   must receive them in the order they happened; the action can then no longer be
 *   undone).
 * An undo deletes them in the transaction that restores the state. Each of these
 * transactions locks the action's row first, so exactly one of them settles it: an
 * event is written to the outbox once or never, whatever crashes in between.
 */

const holding = new WeakMap<object, string>();

/** Events emitted in `tx` from now on are held by the action `actionId`. */
export function holdEventsFor(tx: Tx, actionId: string): void {
  holding.set(tx, actionId);
}

/** The action holding the events of `tx`, if any. */
export function heldActionOf(tx: Tx): string | undefined {
  return holding.get(tx);
}

/** Releases every unsettled action (but `except`) that holds an event about this alert or order. */
export async function releaseHeldTouching(tx: Tx, alertId: string, serviceOrderId: string | null, except: string | undefined): Promise<void> {
  let q = tx.selectFrom('held_event').select('action_id').distinct();
  q = serviceOrderId ? q.where((eb) => eb.or([eb('alert_id', '=', alertId), eb('service_order_id', '=', serviceOrderId)])) : q.where('alert_id', '=', alertId);
  if (except) q = q.where('action_id', '<>', except);
  const actions = await q.orderBy('action_id').execute();
  for (const { action_id } of actions) await releaseAction(tx, action_id);
}

/**
 * Moves one action's held events to the outbox and marks it released; nothing when it
 * is already settled (released or undone by another transaction meanwhile). Locks the
 * action's row.
 */
export async function releaseAction(tx: Tx, actionId: string): Promise<void> {
  const action = await tx.selectFrom('undoable_action').select(['id', 'settled']).where('id', '=', actionId).forUpdate().executeTakeFirst();
  if (!action || action.settled !== null) return;
  const held = await tx.selectFrom('held_event').selectAll().where('action_id', '=', actionId).orderBy('write_seq').execute();
  const blocked: OrderingKey[] = [];
  let deliveries = 0;
  const partners = new Map<string, boolean>();
  for (const e of held) {
    await tx
      .insertInto('event')
      .values({
        id: e.id,
        tenant_id: e.tenant_id,
        external_system_id: e.external_system_id,
        event_type: e.event_type,
        alert_id: e.alert_id,
        service_order_id: e.service_order_id,
        sequence: e.sequence,
        payload: e.body,
        body: e.body,
        occurred_at: e.occurred_at,
      })
      .execute();
    let webhook = partners.get(e.external_system_id);
    if (webhook === undefined) {
      const p = await tx.selectFrom('external_system').select(['transport', 'webhook_url', 'enabled']).where('id', '=', e.external_system_id).executeTakeFirstOrThrow();
      webhook = p.transport === 'webhook' && p.webhook_url !== null && p.enabled;
      partners.set(e.external_system_id, webhook);
    }
    if (webhook) {
      const delivery = await insertDelivery(tx, { event_id: e.id, external_system_id: e.external_system_id, ordering_key: e.service_order_id ?? e.alert_id });
      deliveries++;
      if (delivery.blocked) blocked.push(delivery);
    }
  }
  await tx.deleteFrom('held_event').where('action_id', '=', actionId).execute();
  await tx.updateTable('undoable_action').set({ settled: 'released', settled_at: sql<Date>`now()` }).where('id', '=', actionId).execute();
  if (deliveries > 0) await wakeDeliveries(tx, blocked);
}

/**
 * Releases the actions whose window has passed, oldest first, each in a transaction of
 * its own (an action another process is settling is skipped, not waited for). Returns
 * how many were released. `seenDue`: the caller has just found one due (the events poll,
 * lumen_poll_events), so the cheap read that looks for one is skipped.
 */
export async function releaseDueActions(db: Kysely<DB>, max = 100, o: { seenDue?: boolean } = {}): Promise<number> {
  // One cheap read first: almost always nothing is due, and then no transaction is opened.
  if (!o.seenDue) {
    const any = await db.selectFrom('undoable_action').select('id').where('settled', 'is', null).where('release_at', '<=', sql<Date>`now()`).limit(1).executeTakeFirst();
    if (!any) return 0;
  }
  let released = 0;
  while (released < max) {
    const done = await db.transaction().execute(async (tx) => {
      const due = await tx
        .selectFrom('undoable_action')
        .select('id')
        .where('settled', 'is', null)
        .where('release_at', '<=', sql<Date>`now()`)
        .orderBy('release_at')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!due) return false;
      await releaseAction(tx, due.id);
      return true;
    });
    if (!done) break;
    released++;
  }
  return released;
}
