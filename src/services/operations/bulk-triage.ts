import type { BulkTriageItem, BulkTriageRequest, BulkTriageResult } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Executor, Tx } from '../../db/database.js';
import { allocateServiceOrderNumber } from '../../db/repositories/counter.repository.js';
import { findTeam } from '../../db/repositories/operations/team.repository.js';
import { findAlerts, lockAlerts, lockOrder, type AlertRow, type OrderRow, type ReasonRow } from '../../db/repositories/operations/triage.repository.js';
import type { Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { isUuid } from '../tenants/index.js';
import { operatorTransaction } from './transaction.js';
import { beginUndoable, type UndoRequest } from './undo.js';
import { createOrderLocked, discardLocked, linkLocked, reclassifyLocked, requireOpenOrder, requireReason } from './triage.js';

/**
 * Triage at volume (issue 23): one action on up to 500 Pending alerts of one tenant, in
 * one transaction, all or nothing. Each alert goes through the same code as its single
 * action (the *Locked functions of triage.ts), so its history, audit entry and event are
 * exactly those of the single action.
 *
 * Every alert is locked (in id order, after the order to link to: orders before alerts)
 * and checked before anything is written; when one is refused the transaction ends with
 * a problem listing every alert's outcome, and nothing changes. An alert of another
 * tenant, even one the caller may see, is answered exactly as an unknown id.
 */

export const BULK_MAX_ALERTS = 500;

export type BulkAction = BulkTriageRequest['action'];

export interface BulkTriageInput {
  tenantId: string;
  alertIds: string[];
  action: BulkAction;
  /** assign-team (required), create-order (optional): a team id of the tenant (the handler resolves names). */
  teamId?: string;
  /** reclassify (required), create-order and assign-team (optional). */
  reasonCode?: string;
  /** link (required): an order id of the tenant (the handler resolves numbers). */
  serviceOrderId?: string;
  /** discard (required). */
  note?: string;
}

function invalid(errors: FieldError[]): AppError {
  return new AppError('validation-failed', { count: errors.length }, errors);
}

/** What each action needs in the body, checked before any database read. */
function checkParameters(input: BulkTriageInput): void {
  const errors: FieldError[] = [];
  if (!Array.isArray(input.alertIds) || input.alertIds.length === 0) errors.push({ pointer: '/alertIds', message: 'must name at least one alert' });
  else if (input.alertIds.length > BULK_MAX_ALERTS) errors.push({ pointer: '/alertIds', message: `must name at most ${BULK_MAX_ALERTS} alerts` });
  else if (new Set(input.alertIds).size !== input.alertIds.length) errors.push({ pointer: '/alertIds', message: 'must not name an alert twice' });
  const needs = (field: keyof BulkTriageInput, when: boolean) => {
    const v = input[field];
    if (when && (typeof v !== 'string' || v.trim() === '')) errors.push({ pointer: `/${field}`, message: `is required for ${input.action}` });
    if (!when && v !== undefined) errors.push({ pointer: `/${field}`, message: `is not used by ${input.action}` });
  };
  needs('serviceOrderId', input.action === 'link');
  needs('note', input.action === 'discard');
  if (input.action === 'reclassify') needs('reasonCode', true);
  else if (input.action !== 'create-order' && input.action !== 'assign-team') needs('reasonCode', false);
  if (input.action === 'assign-team') needs('teamId', true);
  else if (input.action !== 'create-order') needs('teamId', false);
  if (input.note !== undefined && input.note.trim().length > 500) errors.push({ pointer: '/note', message: 'must be at most 500 characters' });
  if (errors.length > 0) throw invalid(errors);
}

/**
 * Every alert's outcome against what was read (locked or not): refused when it is not
 * in the tenant (unknown, another tenant's, not an id) or not Pending. Throws the
 * problem that lists them all when any is refused.
 */
function checkAlerts(input: BulkTriageInput, rows: readonly AlertRow[]): AlertRow[] {
  const byId = new Map(rows.filter((r) => r.tenant_id === input.tenantId).map((r) => [r.id, r]));
  const results: BulkTriageItem[] = [];
  let unknown = 0;
  let notPending = 0;
  for (const id of input.alertIds) {
    const row = byId.get(id);
    if (!row) {
      unknown++;
      results.push({ alertId: id, outcome: 'refused', reason: 'not-found' });
    } else if (row.status !== 'Pending') {
      notPending++;
      results.push({ alertId: id, outcome: 'refused', reason: 'not-pending', alertNumber: row.alert_number, state: row.status });
    } else results.push({ alertId: id, outcome: 'done', alertNumber: row.alert_number, state: row.status });
  }
  const refused = unknown + notPending;
  if (refused > 0) {
    const params = { refused, count: input.alertIds.length };
    throw new AppError(unknown > 0 ? 'bulk-unknown-alerts' : 'bulk-refused', params, undefined, undefined, { refused, results });
  }
  // In the order the operator named them: the first one gives a new order its address.
  return input.alertIds.map((id) => byId.get(id)!);
}

async function tenantTeam(tx: Executor, tenantId: string, teamId: string): Promise<void> {
  const team = isUuid(teamId) ? await findTeam(tx, teamId) : undefined;
  if (!team || team.tenant_id !== tenantId) throw invalid([{ pointer: '/teamId', message: 'no such team in the tenant' }]);
}

/**
 * The batch's tenant: one the caller triages (404 when it cannot see it or it does not
 * exist, even for a platform admin; 403 below triager).
 */
export async function requireTriageTenant(deps: ServiceDeps, access: AdminAccess, tenantId: string): Promise<void> {
  const resource = `tenant ${tenantId}`;
  if (!isUuid(tenantId ?? '')) throw new AppError('not-found', { resource });
  requireTenantRole(access, tenantId, 'triager', resource);
  if (!(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource });
}

/**
 * Runs one action on every alert named. Returns one result per alert (all `done`), or
 * throws: not-found for a tenant the caller cannot see (forbidden below triager),
 * validation-failed for the action's parameters, bulk-unknown-alerts (422) or
 * bulk-refused (409) with every alert's outcome, invalid-transition for a closed order.
 */
export async function bulkTriage(deps: ServiceDeps, actor: Actor, input: BulkTriageInput, undo?: UndoRequest): Promise<BulkTriageResult> {
  await requireTriageTenant(deps, actor.access, input.tenantId);
  checkParameters(input);
  const ids = input.alertIds.filter(isUuid);
  const note = input.note?.trim() || null;

  // create-order takes its number outside the transaction (see createOrderFromAlert), so
  // everything that can refuse the batch is looked at first: a refused batch leaves the
  // tenant's counter as it was. The transaction checks it all again under its locks.
  // assign-team takes one number per alert, the same way.
  const numbers: string[] = [];
  if (input.action === 'create-order' || input.action === 'assign-team') {
    checkAlerts(input, await findAlerts(deps.db, ids));
    if (input.reasonCode !== undefined) await requireReason(deps.db, input.tenantId, input.reasonCode);
    if (input.teamId !== undefined) await tenantTeam(deps.db, input.tenantId, input.teamId);
    const wanted = input.action === 'assign-team' ? input.alertIds.length : 1;
    for (let i = 0; i < wanted; i++) numbers.push(await allocateServiceOrderNumber(deps.db, input.tenantId));
  }

  return operatorTransaction(deps, async (tx) => {
    let order: OrderRow | null = null;
    if (input.action === 'link') {
      // Orders before alerts, as everywhere else.
      const o = isUuid(input.serviceOrderId!) ? await lockOrder(tx, input.serviceOrderId!) : undefined;
      if (!o || o.tenant_id !== input.tenantId) throw invalid([{ pointer: '/serviceOrderId', message: 'no such service order in the tenant' }]);
      order = o;
    }
    const alerts = checkAlerts(input, await lockAlerts(tx, ids));
    if (order) requireOpenOrder(order);
    let reason: ReasonRow | null = null;
    if (input.reasonCode !== undefined) reason = await requireReason(tx, input.tenantId, input.reasonCode);

    const undoable = await beginUndoable(deps, tx, actor, input.tenantId, input.action, alerts, [], undo);

    const results: BulkTriageItem[] = [];
    switch (input.action) {
      case 'create-order': {
        const [first, ...rest] = alerts;
        order = await createOrderLocked(deps, tx, actor, first!, numbers[0]!, { teamId: input.teamId, reasonCode: input.reasonCode });
        results.push({ alertId: first!.id, outcome: 'done', alertNumber: first!.alert_number, state: 'Linked' });
        for (const alert of rest) {
          const current = reason ? await reclassifyLocked(tx, actor, alert, null, reason) : alert;
          const linked = await linkLocked(tx, actor, current, order);
          results.push({ alertId: linked.id, outcome: 'done', alertNumber: linked.alert_number, state: linked.status });
        }
        break;
      }
      case 'assign-team':
        // Different lamps for one crew: each alert its own order, ASSIGNED at once,
        // exactly as "create order" with a team on the alert's page.
        for (const [i, alert] of alerts.entries()) {
          const own = await createOrderLocked(deps, tx, actor, alert, numbers[i]!, { teamId: input.teamId, reasonCode: input.reasonCode });
          results.push({ alertId: alert.id, outcome: 'done', alertNumber: alert.alert_number, state: 'Linked', serviceOrder: { id: own.id, number: own.number } });
        }
        break;
      case 'link':
        for (const alert of alerts) {
          const linked = await linkLocked(tx, actor, alert, order!);
          results.push({ alertId: linked.id, outcome: 'done', alertNumber: linked.alert_number, state: linked.status });
        }
        break;
      case 'reclassify':
        for (const alert of alerts) {
          const updated = await reclassifyLocked(tx, actor, alert, null, reason!);
          results.push({ alertId: updated.id, outcome: 'done', alertNumber: updated.alert_number, state: updated.status });
        }
        break;
      case 'discard':
        for (const alert of alerts) {
          const cancelled = await discardLocked(tx, actor, alert, note);
          results.push({ alertId: cancelled.id, outcome: 'done', alertNumber: cancelled.alert_number, state: cancelled.status });
        }
        break;
    }
    // The orders the action made: the one of create-order, or assign-team's one per alert.
    const created = input.action === 'create-order' && order ? [order.id] : input.action === 'assign-team' ? results.flatMap((r) => (r.serviceOrder ? [r.serviceOrder.id] : [])) : [];
    await undoable?.finish(created);
    return {
      action: input.action,
      handled: results.length,
      ...(order ? { serviceOrder: { id: order.id, number: order.number } } : {}),
      results,
    };
  });
}
