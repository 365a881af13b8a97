import { statusWords } from '../../lib/status-words.js';
import { sql } from 'kysely';
import type { AdminServiceOrder, ServiceOrder } from '../../../generated/admin/types.gen.js';
import type { EventType } from '../../../generated/partner/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Localized } from '../../lib/i18n.js';
import type { Tx } from '../../db/database.js';
import type { ServiceOrderStatus } from '../../db/tables/domain.js';
import { findTeam } from '../../db/repositories/operations/team.repository.js';
import { findOrderListRow } from '../../db/repositories/operations/order-list.repository.js';
import { addAlertHistory, addOrderHistory, lockAlertsOfOrder, lockOrder, updateAlert, updateOrder, type AlertRow, type OrderRow } from '../../db/repositories/operations/triage.repository.js';
import { actorLabel, recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { operatorTransaction } from './transaction.js';
import { beginUndoable, type UndoRequest } from './undo.js';
import { emitEvent } from '../events/index.js';
import { loadServiceOrder, serviceOrderView } from './order-view.js';
import { adminServiceOrderView } from './order-list.js';
import { isUuid } from '../tenants/index.js';
import { ACTION_NAMES, orderSnapshot } from './triage-view.js';
import { inScope, type AdminAccess } from '../operators/index.js';
import { alreadyCompleted, recordCompletion, type CompletionInput } from '../completion/index.js';

/** closedAt is the order's change stamp (0016: taken when the transaction writes), so it equals updatedAt. */
const CLOSED_NOW = sql<Date>`lumen_write_stamp()`;

/**
 * The service-order status machine (interface 3.3):
 *
 *   assign    OPEN, ASSIGNED              -> ASSIGNED     ServiceOrder.StatusChanged
 *   start     ASSIGNED                    -> IN_PROGRESS  ServiceOrder.StatusChanged
 *   complete  ASSIGNED, IN_PROGRESS       -> COMPLETED    ServiceOrder.Completed; alerts -> Resolved
 *   cancel    OPEN, ASSIGNED, IN_PROGRESS -> CANCELLED    ServiceOrder.Cancelled; alerts -> Pending
 *
 * COMPLETED and CANCELLED are final and set closed_at. Events go one per linked alert,
 * to that alert's partner. The order is locked first, then its alerts (the same order
 * as triage), and the change, history, audit entry and events commit together.
 */
export const ORDER_MOVES: Readonly<Record<'assign' | 'start' | 'complete' | 'cancel', { from: readonly ServiceOrderStatus[]; to: ServiceOrderStatus; event: EventType }>> = {
  assign: { from: ['OPEN', 'ASSIGNED'], to: 'ASSIGNED', event: 'ServiceOrder.StatusChanged' },
  start: { from: ['ASSIGNED'], to: 'IN_PROGRESS', event: 'ServiceOrder.StatusChanged' },
  complete: { from: ['ASSIGNED', 'IN_PROGRESS'], to: 'COMPLETED', event: 'ServiceOrder.Completed' },
  cancel: { from: ['OPEN', 'ASSIGNED', 'IN_PROGRESS'], to: 'CANCELLED', event: 'ServiceOrder.Cancelled' },
};

type Move = keyof typeof ORDER_MOVES;

function notFound(id: string): AppError {
  return new AppError('not-found', { resource: `service order ${id}` });
}

function checkNote(note: string | undefined, pointer: string): string | null {
  const text = note?.trim() || null;
  if (text !== null && text.length > 500) {
    const errors: FieldError[] = [{ pointer, message: 'must be at most 500 characters' }];
    throw new AppError('validation-failed', { count: 1 }, errors);
  }
  return text;
}

export async function getServiceOrder(deps: ServiceDeps, access: AdminAccess, id: string): Promise<AdminServiceOrder> {
  const row = isUuid(id) ? await findOrderListRow(deps.db, id) : undefined;
  return adminServiceOrderView(inScope(access, row, 'viewer', `service order ${id}`));
}

interface MoveContext {
  tx: Tx;
  order: OrderRow;
  alerts: AlertRow[];
}

/**
 * Runs one move: locks the order and its alerts, checks the move is allowed from the
 * current status, applies `change` (which returns the order patch, or null for "nothing
 * to do"), then writes history, audit and one event per linked alert.
 */
async function move(
  deps: ServiceDeps,
  actor: Actor,
  orderId: string,
  name: Move,
  note: string | null,
  change: (ctx: MoveContext) => Promise<{ patch: Parameters<typeof updateOrder>[2]; historyNote: string | null } | null>,
  alertChange?: (alert: AlertRow, order: OrderRow) => Parameters<typeof updateAlert>[2],
  undo?: UndoRequest,
  /** Answers the order as it is, without moving it, when true (a completion sent again). */
  done?: (tx: Tx, order: OrderRow) => Promise<boolean>,
): Promise<ServiceOrder> {
  if (!isUuid(orderId)) throw notFound(orderId);
  const rule = ORDER_MOVES[name];
  const who = actorLabel(actor);
  return operatorTransaction(deps, async (tx) => {
    const order = inScope(actor.access, await lockOrder(tx, orderId), 'triager', `service order ${orderId}`);
    // A retry of a move already made (the same completion id): answered, nothing changes.
    if (done && (await done(tx, order))) return serviceOrderView((await loadServiceOrder(tx, order.id))!);
    if (!rule.from.includes(order.status)) throw new AppError('invalid-transition', { action: ACTION_NAMES[name] as Localized, state: statusWords(order.status) });
    const alerts = await lockAlertsOfOrder(tx, order.id);
    const planned = await change({ tx, order, alerts });
    if (!planned) return serviceOrderView((await loadServiceOrder(tx, order.id))!);
    const undoable = name === 'cancel' ? await beginUndoable(deps, tx, actor, order.tenant_id, 'cancel-order', alerts, [order], undo) : null;

    const updated = await updateOrder(tx, order.id, { ...planned.patch, status: rule.to });
    await addOrderHistory(tx, { service_order_id: order.id, from_status: order.status, to_status: rule.to, actor: who, note: planned.historyNote });

    const changedAlerts: AlertRow[] = [];
    for (const alert of alerts) {
      if (!alertChange) {
        changedAlerts.push(alert);
        continue;
      }
      const next = await updateAlert(tx, alert.id, alertChange(alert, updated));
      await addAlertHistory(tx, { alert_id: alert.id, from_status: alert.status, to_status: next.status, actor: who, note: `order ${order.number} ${rule.to}` });
      changedAlerts.push(next);
    }
    await recordAudit(tx, actor, {
      tenantId: order.tenant_id,
      action: `service-order.${name}`,
      entityType: 'service_order',
      entityId: order.id,
      before: { ...orderSnapshot(order), alerts: alerts.map((a) => ({ id: a.id, status: a.status })) },
      after: { ...orderSnapshot(updated), alerts: changedAlerts.map((a) => ({ id: a.id, status: a.status })) },
      note,
    });
    // Alerts are updated first, so each envelope carries the alert's new status.
    for (const alert of changedAlerts) {
      await emitEvent(tx, rule.event, { alert, serviceOrderId: order.id, note });
    }
    await undoable?.finish();
    return serviceOrderView((await loadServiceOrder(tx, order.id))!);
  });
}

/** OPEN/ASSIGNED -> ASSIGNED with a team of the order's tenant; the same team again changes nothing. */
export async function assignServiceOrder(deps: ServiceDeps, actor: Actor, orderId: string, teamId: string, noteText?: string): Promise<ServiceOrder> {
  if (!isUuid(teamId ?? '')) {
    const errors: FieldError[] = [{ pointer: '/teamId', message: 'must be a team id (UUID)' }];
    throw new AppError('validation-failed', { count: 1 }, errors);
  }
  const note = checkNote(noteText, '/note');
  return move(deps, actor, orderId, 'assign', note, async ({ tx, order }) => {
    const team = await findTeam(tx, teamId);
    if (!team || team.tenant_id !== order.tenant_id) {
      const errors: FieldError[] = [{ pointer: '/teamId', message: "no such team in the order's tenant" }];
      throw new AppError('validation-failed', { count: 1 }, errors);
    }
    if (order.status === 'ASSIGNED' && order.team_id === team.id) return null;
    return { patch: { team_id: team.id }, historyNote: note ?? `team ${team.name}` };
  });
}

/** ASSIGNED -> IN_PROGRESS. */
export async function startServiceOrder(deps: ServiceDeps, actor: Actor, orderId: string, noteText?: string): Promise<ServiceOrder> {
  const note = checkNote(noteText, '/note');
  return move(deps, actor, orderId, 'start', note, async () => ({ patch: {}, historyNote: note }));
}

/**
 * ASSIGNED/IN_PROGRESS -> COMPLETED: closed_at set, every linked alert Resolved. The
 * completion (its client's id, materials, photos) is recorded in the same transaction;
 * partners get the note alone. The same completion id again answers the order as it is.
 */
export async function completeServiceOrder(deps: ServiceDeps, actor: Actor, orderId: string, noteText?: string, input: CompletionInput = {}): Promise<ServiceOrder> {
  const note = checkNote(noteText, '/note');
  const who = actorLabel(actor);
  return move(
    deps,
    actor,
    orderId,
    'complete',
    note,
    async ({ tx, order }) => {
      await recordCompletion(tx, order, input, note, who);
      return { patch: { closed_at: CLOSED_NOW }, historyNote: note };
    },
    () => ({ status: 'Resolved' }),
    undefined,
    (tx, order) => alreadyCompleted(tx, order.id, input.completionId),
  );
}

/**
 * OPEN/ASSIGNED/IN_PROGRESS -> CANCELLED: closed_at set; the linked alerts are released
 * back to Pending (unlinked), to be linked to another order or discarded in triage.
 */
export async function cancelServiceOrder(deps: ServiceDeps, actor: Actor, orderId: string, reasonText?: string, undo?: UndoRequest): Promise<ServiceOrder> {
  const note = checkNote(reasonText, '/reason');
  return move(
    deps,
    actor,
    orderId,
    'cancel',
    note,
    async () => ({ patch: { closed_at: CLOSED_NOW }, historyNote: note }),
    () => ({ status: 'Pending', service_order_id: null }),
    undo,
  );
}
