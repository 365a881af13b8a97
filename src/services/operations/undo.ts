import { sql } from 'kysely';
import type { Tx } from '../../db/database.js';
import type { AlertStatus, ServiceOrderStatus } from '../../db/tables/domain.js';
import { addAlertHistory, addOrderHistory, lockAlerts, lockOrder, updateAlert, updateOrder, type AlertRow, type OrderRow } from '../../db/repositories/operations/triage.repository.js';
import { AppError } from '../../lib/errors.js';
import { actorLabel, recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { holdEventsFor } from '../events/index.js';
import { inScope } from '../operators/index.js';
import { isUuid } from '../tenants/index.js';
import { operatorTransaction } from './transaction.js';

/**
 * Undo within a short window (issue 23 §2): create order, link, discard, reclassify
 * (single and bulk) and an order's cancellation. The caller asks for it (the console
 * does; the admin API with `Prefer: undo`): the action then records what it changed
 * in undoable_action, its partner events are held until the window passes (see
 * services/events/hold.ts), and undoAction within the window puts every alert and
 * order back as it was, deletes an order the action created and the held events, and
 * writes an audit entry per object. The partner never learns of an undone action.
 */

export type UndoableKind = 'create-order' | 'assign-team' | 'link' | 'discard' | 'reclassify' | 'cancel-order';

/** Filled in by an action that was asked to be undoable: the action's id and the end of its window. */
export interface UndoRequest {
  ticket?: { actionId: string; until: Date };
}

interface AlertState {
  id: string;
  status: AlertStatus;
  service_order_id: string | null;
  reason_code: string;
  priority: AlertRow['priority'];
  sla_due_at: string;
  cancel_reason: string | null;
}

interface OrderState {
  id: string;
  status: ServiceOrderStatus;
  reason_code: string;
  priority: OrderRow['priority'];
  sla_due_at: string;
  closed_at: string | null;
  team_id: string | null;
}

interface Snapshot {
  alerts: AlertState[];
  orders: OrderState[];
  /** Orders the action created (after only): deleted by an undo. */
  created: string[];
}

function alertState(a: AlertRow): AlertState {
  return { id: a.id, status: a.status, service_order_id: a.service_order_id, reason_code: a.reason_code, priority: a.priority, sla_due_at: a.sla_due_at.toISOString(), cancel_reason: a.cancel_reason };
}

function orderState(o: OrderRow): OrderState {
  return { id: o.id, status: o.status, reason_code: o.reason_code, priority: o.priority, sla_due_at: o.sla_due_at.toISOString(), closed_at: o.closed_at?.toISOString() ?? null, team_id: o.team_id };
}

function sameAlert(a: AlertState, b: AlertState): boolean {
  return a.status === b.status && a.service_order_id === b.service_order_id && a.reason_code === b.reason_code && a.cancel_reason === b.cancel_reason;
}

function sameOrder(a: OrderState, b: OrderState): boolean {
  return a.status === b.status && a.reason_code === b.reason_code && a.team_id === b.team_id;
}

export interface Undoable {
  /** Records the state the action left (read in `tx`), with the orders it created; fills the request's ticket. */
  finish(created?: readonly string[]): Promise<void>;
}

/**
 * Starts an undoable action in `tx`, before it changes anything: records the alerts and
 * orders it will change as they are (locked by the caller), and holds the events the
 * transaction writes from now on. Null (nothing recorded, events as usual) when the
 * caller did not ask for undo.
 */
export async function beginUndoable(
  deps: ServiceDeps,
  tx: Tx,
  actor: Actor,
  tenantId: string,
  kind: UndoableKind,
  alerts: readonly AlertRow[],
  orders: readonly OrderRow[],
  request: UndoRequest | undefined,
): Promise<Undoable | null> {
  if (!request) return null;
  const before: Snapshot = { alerts: alerts.map(alertState), orders: orders.map(orderState), created: [] };
  const row = await tx
    .insertInto('undoable_action')
    .values({
      tenant_id: tenantId,
      kind,
      actor: actorLabel(actor),
      release_at: sql<Date>`now() + make_interval(secs => ${deps.config.undoWindowSeconds})`,
      before: JSON.stringify(before),
      after: JSON.stringify(before),
    })
    .returning(['id', 'release_at'])
    .executeTakeFirstOrThrow();
  holdEventsFor(tx, row.id);
  return {
    async finish(created: readonly string[] = []) {
      const alertRows = await tx.selectFrom('alert').selectAll().where('id', 'in', before.alerts.map((a) => a.id)).execute();
      const orderIds = [...before.orders.map((o) => o.id), ...created];
      const orderRows = orderIds.length > 0 ? await tx.selectFrom('service_order').selectAll().where('id', 'in', orderIds).execute() : [];
      const after: Snapshot = { alerts: alertRows.map(alertState), orders: orderRows.map(orderState), created: [...created] };
      await tx.updateTable('undoable_action').set({ after: JSON.stringify(after) }).where('id', '=', row.id).execute();
      request.ticket = { actionId: row.id, until: row.release_at };
    },
  };
}

export interface UndoneAction {
  id: string;
  kind: UndoableKind;
  undoneAt: string;
}

function notFound(id: string): AppError {
  return new AppError('not-found', { resource: `action ${id}` });
}

/**
 * Undoes an action within its window: 404 for an unknown action or one of a city the
 * caller does not triage; 409 undo-expired when the window has passed (its events
 * were or are being sent) or it was undone already; 409 undo-changed when one of its
 * alerts or orders was changed since (the change stands).
 */
export async function undoAction(deps: ServiceDeps, actor: Actor, actionId: string): Promise<UndoneAction> {
  if (!isUuid(actionId)) throw notFound(actionId);
  const who = actorLabel(actor);
  return operatorTransaction(deps, async (tx) => {
    const action = inScope(
      actor.access,
      await tx.selectFrom('undoable_action').selectAll().select(sql<boolean>`release_at <= now()`.as('passed')).select(sql<Date>`now()`.as('now')).where('id', '=', actionId).forUpdate().executeTakeFirst(),
      'triager',
      `action ${actionId}`,
    );
    if (action.settled === 'undone') throw new AppError('undo-expired', {});
    if (action.settled === 'released' || action.passed) throw new AppError('undo-expired', {});
    const before = action.before as Snapshot;
    const after = action.after as Snapshot;

    // Orders before alerts, each in id order, as every other action locks them.
    const orderIds = [...new Set([...after.orders.map((o) => o.id), ...before.orders.map((o) => o.id)])].sort();
    const orders = new Map<string, OrderRow>();
    for (const id of orderIds) {
      const o = await lockOrder(tx, id);
      if (o) orders.set(id, o);
    }
    const alerts = new Map((await lockAlerts(tx, before.alerts.map((a) => a.id))).map((a) => [a.id, a]));

    const changed = () => new AppError('undo-changed', {});
    for (const a of after.alerts) {
      const now = alerts.get(a.id);
      if (!now || !sameAlert(alertState(now), a)) throw changed();
    }
    for (const o of after.orders) {
      const now = orders.get(o.id);
      if (!now || !sameOrder(orderState(now), o)) throw changed();
    }
    if (after.created.length > 0) {
      const others = await tx.selectFrom('alert').select('id').where('service_order_id', 'in', after.created).where('id', 'not in', before.alerts.map((a) => a.id)).executeTakeFirst();
      if (others) throw changed();
    }

    const auditAction = action.kind === 'cancel-order' ? 'service-order.undo' : 'alert.undo';
    // Orders first: an alert put back on an order needs it open again.
    for (const o of before.orders) {
      const now = orders.get(o.id)!;
      const restored = await updateOrder(tx, o.id, {
        status: o.status,
        reason_code: o.reason_code,
        priority: o.priority,
        sla_due_at: new Date(o.sla_due_at),
        closed_at: o.closed_at === null ? null : new Date(o.closed_at),
        team_id: o.team_id,
      });
      if (now.status !== o.status) await addOrderHistory(tx, { service_order_id: o.id, from_status: now.status, to_status: o.status, actor: who, note: 'undone' });
      if (action.kind === 'cancel-order') {
        await recordAudit(tx, actor, { tenantId: action.tenant_id, action: auditAction, entityType: 'service_order', entityId: o.id, before: orderState(now), after: orderState(restored), note: action.kind });
      }
    }
    for (const a of before.alerts) {
      const now = alerts.get(a.id)!;
      const restored = await updateAlert(tx, a.id, {
        status: a.status,
        service_order_id: a.service_order_id,
        reason_code: a.reason_code,
        priority: a.priority,
        sla_due_at: new Date(a.sla_due_at),
        cancel_reason: a.cancel_reason,
      });
      if (now.status !== a.status) await addAlertHistory(tx, { alert_id: a.id, from_status: now.status, to_status: a.status, actor: who, note: 'undone' });
      if (action.kind !== 'cancel-order') {
        await recordAudit(tx, actor, { tenantId: action.tenant_id, action: auditAction, entityType: 'alert', entityId: a.id, before: alertState(now), after: alertState(restored), note: action.kind });
      }
    }
    await tx.deleteFrom('held_event').where('action_id', '=', action.id).execute();
    if (after.created.length > 0) {
      await tx.deleteFrom('service_order_status_history').where('service_order_id', 'in', after.created).execute();
      await tx.deleteFrom('service_order').where('id', 'in', after.created).execute();
    }
    await tx.updateTable('undoable_action').set({ settled: 'undone', settled_at: action.now }).where('id', '=', action.id).execute();
    return { id: action.id, kind: action.kind as UndoableKind, undoneAt: action.now.toISOString() };
  });
}
