import { statusWords } from '../../lib/status-words.js';
import type { Alert, AlertPage, ServiceOrder } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Language } from '../../lib/i18n.js';
import type { Executor, Tx } from '../../db/database.js';
import { ALERT_STATUSES, type AlertStatus } from '../../db/tables/domain.js';
import { findAlert } from '../../db/repositories/intake/alert.repository.js';
import { allocateServiceOrderNumber } from '../../db/repositories/counter.repository.js';
import { findTeam } from '../../db/repositories/operations/team.repository.js';
import {
  addAlertHistory,
  addOrderHistory,
  findAlertDetail,
  findReason,
  listAlertDetails,
  type AlertSort,
  lockAlert,
  lockOrder,
  peekAlertOrderId,
  updateAlert,
  updateOrder,
  type AlertRow,
  type OrderRow,
  type ReasonRow,
} from '../../db/repositories/operations/triage.repository.js';
import { actorLabel, recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { doubtAbout, locationUnconfirmed } from '../city-extent/index.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { operatorTransaction } from './transaction.js';
import { beginUndoable, type UndoRequest } from './undo.js';
import { emitEvent } from '../events/index.js';
import { loadServiceOrder, serviceOrderView } from './order-view.js';
import { isUuid } from '../tenants/index.js';
import { ACTION_NAMES, alertSnapshot, alertView, inboxViews, onOrder, orderSnapshot } from './triage-view.js';
import { poleForOrder } from './poles.js';
import { groupSummaries, inboxHiddenAlerts } from './alert-groups.js';
import { canSee, inScope, visibleTenants, type AdminAccess } from '../operators/index.js';

/**
 * Triage of alerts (interface 3.1): an operator creates an order for a Pending alert,
 * links it to an open order, discards it, reclassifies it or sets its location.
 *
 * Every action runs in one transaction: the state change, its status history, its
 * audit entry and its outbox events commit together. Rows are locked (FOR UPDATE)
 * before they are checked, so of two operators acting on one alert the second waits,
 * then sees the first one's result and is refused with invalid-transition. Orders are
 * always locked before alerts (here and in the order lifecycle), so actions that touch
 * both cannot deadlock.
 */

const OPEN_ORDER_STATUSES = new Set(['OPEN', 'ASSIGNED', 'IN_PROGRESS']);

export const ALERT_PAGE_SIZE_DEFAULT = 50;
export const ALERT_PAGE_SIZE_MAX = 500;
const ALERT_SORTS: readonly AlertSort[] = ['number', 'age', 'priority', 'newest'];

function notFound(id: string): AppError {
  return new AppError('not-found', { resource: `alert ${id}` });
}

function invalid(pointer: string, message: string): AppError {
  const errors: FieldError[] = [{ pointer, message }];
  return new AppError('validation-failed', { count: errors.length }, errors);
}

export interface AlertListInput {
  tenantId: string;
  status?: string;
  notGeolocated?: boolean | string;
  serviceOrderId?: string;
  /** The partner's code. */
  partner?: string;
  /** The internal reason code. */
  reason?: string;
  /** The reason code the partner sent, as received. */
  partnerReason?: string;
  overdue?: boolean | string;
  /** Words found (accent- and case-insensitive) in what the inbox row shows, or a pole's code (db/repositories/operations/search.ts). */
  text?: string;
  sort?: string;
  page?: number | string;
  pageSize?: number | string;
  /** With status Pending: each group of Pending alerts once (alert-groups.ts). */
  grouped?: boolean | string;
}

/**
 * A tenant's alerts, oldest first, one page at a time (page size default 50, cut to 500).
 * A tenant the caller cannot see answers as an unknown one: an empty page.
 */
export async function listAlerts(deps: ServiceDeps, access: AdminAccess, input: AlertListInput, lang: Language): Promise<AlertPage> {
  const errors: FieldError[] = [];
  if (!isUuid(input.tenantId ?? '')) errors.push({ pointer: '/tenantId', message: 'must be a tenant id (UUID)' });
  if (input.status !== undefined && !(ALERT_STATUSES as readonly string[]).includes(input.status)) errors.push({ pointer: '/status', message: `must be one of: ${ALERT_STATUSES.join(', ')}` });
  if (input.serviceOrderId !== undefined && !isUuid(input.serviceOrderId)) errors.push({ pointer: '/serviceOrderId', message: 'must be a service order id (UUID)' });
  const page = input.page === undefined ? 1 : Number(input.page);
  if (!Number.isInteger(page) || page < 1) errors.push({ pointer: '/page', message: 'must be a whole number of at least 1' });
  const requested = input.pageSize === undefined ? ALERT_PAGE_SIZE_DEFAULT : Number(input.pageSize);
  if (!Number.isInteger(requested) || requested < 1) errors.push({ pointer: '/pageSize', message: 'must be a whole number of at least 1' });
  const sort = (input.sort ?? 'number') as AlertSort;
  if (!ALERT_SORTS.includes(sort)) errors.push({ pointer: '/sort', message: `must be one of: ${ALERT_SORTS.join(', ')}` });
  const text = input.text?.trim() || undefined;
  if (text !== undefined && text.length > 200) errors.push({ pointer: '/text', message: 'must be at most 200 characters' });
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  const pageSize = Math.min(requested, ALERT_PAGE_SIZE_MAX);
  const notGeolocated = input.notGeolocated === true || input.notGeolocated === 'true';
  const grouped = (input.grouped === true || input.grouped === 'true') && input.status === 'Pending';
  if (!canSee(access, input.tenantId)) return { items: [], page, pageSize, total: 0 };
  const { rows, total } = await listAlertDetails(
    deps.db,
    {
      tenantId: input.tenantId,
      status: input.status as AlertStatus | undefined,
      notGeolocated,
      serviceOrderId: input.serviceOrderId,
      partnerCode: input.partner,
      reasonCode: input.reason,
      partnerReasonCode: input.partnerReason,
      overdue: input.overdue === true || input.overdue === 'true',
      text,
      hidden: grouped ? await inboxHiddenAlerts(deps.db, input.tenantId, deps.config.poleMatchMeters) : undefined,
    },
    (page - 1) * pageSize,
    pageSize,
    sort,
  );
  const items = await inboxViews(deps.db, rows, lang);
  if (!grouped) return { items, page, pageSize, total };
  return { items, page, pageSize, total, groups: await groupSummaries(deps.db, deps.config.poleMatchMeters, input.tenantId, rows.map((r) => r.id)) };
}

export async function getAlert(deps: ServiceDeps, access: AdminAccess, id: string, lang: Language): Promise<Alert> {
  const row = isUuid(id) ? await findAlertDetail(deps.db, id, visibleTenants(access)) : undefined;
  return alertView(inScope(access, row, 'viewer', `alert ${id}`), lang);
}

async function viewInTx(tx: Tx, id: string, lang: Language): Promise<Alert> {
  return alertView((await findAlertDetail(tx, id, 'all'))!, lang);
}

/**
 * Locks an alert and, when it is linked, its order first (orders before alerts). The
 * link is read before locking; when a concurrent action changed it while this one
 * waited for the alert's lock, the action is refused with 409 conflict rather than
 * taking the new order's lock after the alert's (which could deadlock).
 */
async function lockAlertAndOrder(tx: Tx, access: AdminAccess, id: string): Promise<{ alert: AlertRow; order: OrderRow | null }> {
  const peek = inScope(access, await peekAlertOrderId(tx, id), 'triager', `alert ${id}`);
  const order = peek.service_order_id ? ((await lockOrder(tx, peek.service_order_id)) ?? null) : null;
  const alert = await lockAlert(tx, id);
  if (!alert) throw notFound(id);
  if (alert.service_order_id !== peek.service_order_id) throw new AppError('conflict', { reason: `alert ${id} was changed by another action meanwhile; read it again and retry` });
  return { alert, order };
}

/** Locks an alert for an action that needs it Pending (a Pending alert has no order to lock). */
async function lockPendingAlert(tx: Tx, access: AdminAccess, id: string, action: (typeof ACTION_NAMES)[keyof typeof ACTION_NAMES]): Promise<AlertRow> {
  const alert = inScope(access, await lockAlert(tx, id), 'triager', `alert ${id}`);
  requirePending(alert, action);
  return alert;
}

function requirePending(alert: AlertRow, action: (typeof ACTION_NAMES)[keyof typeof ACTION_NAMES]): void {
  if (alert.status !== 'Pending') throw new AppError('invalid-transition', { action, state: statusWords(alert.status) });
}

export async function requireReason(tx: Executor, tenantId: string, code: string): Promise<ReasonRow> {
  const reason = await findReason(tx, tenantId, code);
  if (!reason) throw invalid('/reasonCode', `no reason "${code}" in the alert's tenant`);
  return reason;
}

/** SLA deadline of an alert for a reason: counted from the alert's arrival. */
function slaDue(alert: AlertRow, reason: ReasonRow): Date {
  return new Date(alert.created_at.getTime() + reason.sla_hours * 3_600_000);
}

/** Order address text from the alert's: "street, number" (the number when there is one). */
export function orderAddress(alert: Pick<AlertRow, 'address_street' | 'address_number'>): string {
  const number = alert.address_number?.trim();
  return number ? `${alert.address_street}, ${number}` : alert.address_street;
}

export interface CreateOrderInput {
  teamId?: string;
  reasonCode?: string;
  /** The order's pole (id or code); default: the nearest within LUMEN_POLE_MATCH_METERS of the alert. */
  poleId?: string;
}

/**
 * Pending -> Linked with a new service order (OPEN, or ASSIGNED when a team is given).
 * With a reason code the alert is reclassified first. The alert's partner gets
 * ServiceOrder.Created. Returns the new order in the 2.3 shape.
 *
 * The order's number is taken before the transaction, in a statement of its own, as
 * every writer takes numbers (counter.repository.ts: committed at once, so a city's
 * first number of the year makes its sequence visible to every connection), once the
 * alert is seen to exist and be Pending; an action refused after that leaves the
 * number unused.
 */
export async function createOrderFromAlert(deps: ServiceDeps, actor: Actor, alertId: string, input: CreateOrderInput, undo?: UndoRequest): Promise<ServiceOrder> {
  if (!isUuid(alertId)) throw notFound(alertId);
  if (input.teamId !== undefined && !isUuid(input.teamId)) throw invalid('/teamId', 'must be a team id (UUID)');
  const seen = inScope(actor.access, await findAlert(deps.db, alertId), 'triager', `alert ${alertId}`);
  requirePending(seen, ACTION_NAMES.createOrder);
  // What the body names is checked before the number is taken, so a refused request
  // leaves the counter as it was (the transaction checks again under its locks).
  if (input.reasonCode !== undefined && input.reasonCode !== seen.reason_code) await requireReason(deps.db, seen.tenant_id, input.reasonCode);
  if (input.teamId !== undefined) {
    const team = await findTeam(deps.db, input.teamId);
    if (!team || team.tenant_id !== seen.tenant_id) throw invalid('/teamId', "no such team in the alert's tenant");
  }
  if (input.poleId !== undefined) await poleForOrder(deps, deps.db, seen.tenant_id, input.poleId, seen);
  const number = await allocateServiceOrderNumber(deps.db, seen.tenant_id);
  return operatorTransaction(deps, async (tx) => {
    const alert = await lockPendingAlert(tx, actor.access, alertId, ACTION_NAMES.createOrder);
    const undoable = await beginUndoable(deps, tx, actor, alert.tenant_id, 'create-order', [alert], [], undo);
    const order = await createOrderLocked(deps, tx, actor, alert, number, input);
    await undoable?.finish([order.id]);
    return serviceOrderView((await loadServiceOrder(tx, order.id))!);
  });
}

/**
 * The create-order action on one Pending alert already locked in `tx`: checks what the
 * input names in the alert's tenant, inserts the order numbered `number`, links the
 * alert, and writes its history, audit entry and event. Shared by the single action and
 * the bulk one.
 */
export async function createOrderLocked(deps: ServiceDeps, tx: Tx, actor: Actor, alert: AlertRow, number: string, input: CreateOrderInput): Promise<OrderRow> {
  const who = actorLabel(actor);
  const reason = input.reasonCode !== undefined && input.reasonCode !== alert.reason_code ? await requireReason(tx, alert.tenant_id, input.reasonCode) : null;
  let teamName: string | null = null;
  if (input.teamId !== undefined) {
    const team = await findTeam(tx, input.teamId);
    if (!team || team.tenant_id !== alert.tenant_id) throw invalid('/teamId', "no such team in the alert's tenant");
    teamName = team.name;
  }
  const poleId = await poleForOrder(deps, tx, alert.tenant_id, input.poleId, alert);
  const priority = reason?.priority ?? alert.priority;
  const slaDueAt = reason ? slaDue(alert, reason) : alert.sla_due_at;
  const order = await tx
    .insertInto('service_order')
    .values({
      tenant_id: alert.tenant_id,
      number,
      status: input.teamId ? 'ASSIGNED' : 'OPEN',
      priority,
      reason_code: reason?.code ?? alert.reason_code,
      address: orderAddress(alert),
      neighborhood: alert.address_neighborhood,
      latitude: alert.latitude,
      longitude: alert.longitude,
      pole_id: poleId,
      team_id: input.teamId ?? null,
      sla_due_at: slaDueAt,
      closed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await addOrderHistory(tx, { service_order_id: order.id, from_status: null, to_status: 'OPEN', actor: who, note: `created in triage from alert ${alert.alert_number}` });
  if (input.teamId) await addOrderHistory(tx, { service_order_id: order.id, from_status: 'OPEN', to_status: 'ASSIGNED', actor: who, note: `team ${teamName}` });

  const linked = await updateAlert(tx, alert.id, {
    status: 'Linked',
    service_order_id: order.id,
    ...(reason ? { reason_code: reason.code, priority: reason.priority, sla_due_at: slaDueAt } : {}),
  });
  await addAlertHistory(tx, { alert_id: alert.id, from_status: 'Pending', to_status: 'Linked', actor: who, note: `new order ${order.number}` });
  await recordAudit(tx, actor, {
    tenantId: alert.tenant_id,
    action: 'alert.create-order',
    entityType: 'alert',
    entityId: alert.id,
    before: alertSnapshot(alert),
    after: { ...alertSnapshot(linked), serviceOrder: orderSnapshot(order) },
  });
  await emitEvent(tx, 'ServiceOrder.Created', { alert: linked, serviceOrderId: order.id });
  return order;
}

/**
 * Pending -> Linked to an existing order of the same tenant that is not closed (a
 * duplicate report of one lamp). The order does not change; this alert's partner gets
 * ServiceOrder.Created.
 */
export async function linkAlert(deps: ServiceDeps, actor: Actor, alertId: string, serviceOrderId: string, lang: Language, undo?: UndoRequest): Promise<Alert> {
  if (!isUuid(alertId)) throw notFound(alertId);
  if (!isUuid(serviceOrderId)) throw invalid('/serviceOrderId', 'must be a service order id (UUID)');
  return operatorTransaction(deps, async (tx) => {
    // Order first, then the alert: the order lifecycle locks in the same order.
    const order = await lockOrder(tx, serviceOrderId);
    const alert = inScope(actor.access, await lockAlert(tx, alertId), 'triager', `alert ${alertId}`);
    if (!order || order.tenant_id !== alert.tenant_id) throw invalid('/serviceOrderId', "no such service order in the alert's tenant");
    requirePending(alert, ACTION_NAMES.link);
    requireOpenOrder(order);
    const undoable = await beginUndoable(deps, tx, actor, alert.tenant_id, 'link', [alert], [], undo);
    await linkLocked(tx, actor, alert, order);
    await undoable?.finish();
    return viewInTx(tx, alert.id, lang);
  });
}

export function requireOpenOrder(order: OrderRow): void {
  if (!OPEN_ORDER_STATUSES.has(order.status)) throw new AppError('invalid-transition', { action: onOrder(ACTION_NAMES.link, order.number), state: statusWords(order.status) });
}

/** The link action on one Pending alert and an open order of its tenant, both locked in `tx` (order first). */
export async function linkLocked(tx: Tx, actor: Actor, alert: AlertRow, order: OrderRow): Promise<AlertRow> {
  const linked = await updateAlert(tx, alert.id, { status: 'Linked', service_order_id: order.id });
  await addAlertHistory(tx, { alert_id: alert.id, from_status: 'Pending', to_status: 'Linked', actor: actorLabel(actor), note: `linked to order ${order.number}` });
  await recordAudit(tx, actor, {
    tenantId: alert.tenant_id,
    action: 'alert.link',
    entityType: 'alert',
    entityId: alert.id,
    before: alertSnapshot(alert),
    after: { ...alertSnapshot(linked), serviceOrderNumber: order.number },
  });
  await emitEvent(tx, 'ServiceOrder.Created', { alert: linked, serviceOrderId: order.id });
  return linked;
}

/** Pending -> Cancelled (final), with the operator's reason; the partner gets Alert.Cancelled. */
export async function discardAlert(deps: ServiceDeps, actor: Actor, alertId: string, reason: string | undefined, lang: Language, undo?: UndoRequest): Promise<Alert> {
  if (!isUuid(alertId)) throw notFound(alertId);
  const note = reason?.trim() || null;
  if (note !== null && note.length > 500) throw invalid('/reason', 'must be at most 500 characters');
  return operatorTransaction(deps, async (tx) => {
    const alert = await lockPendingAlert(tx, actor.access, alertId, ACTION_NAMES.discard);
    const undoable = await beginUndoable(deps, tx, actor, alert.tenant_id, 'discard', [alert], [], undo);
    await discardLocked(tx, actor, alert, note);
    await undoable?.finish();
    return viewInTx(tx, alert.id, lang);
  });
}

/** The discard action on one Pending alert locked in `tx`. */
export async function discardLocked(tx: Tx, actor: Actor, alert: AlertRow, note: string | null): Promise<AlertRow> {
  const cancelled = await updateAlert(tx, alert.id, { status: 'Cancelled', cancel_reason: note });
  await addAlertHistory(tx, { alert_id: alert.id, from_status: 'Pending', to_status: 'Cancelled', actor: actorLabel(actor), note });
  await recordAudit(tx, actor, { tenantId: alert.tenant_id, action: 'alert.discard', entityType: 'alert', entityId: alert.id, before: alertSnapshot(alert), after: alertSnapshot(cancelled), note });
  await emitEvent(tx, 'Alert.Cancelled', { alert: cancelled, serviceOrderId: null, note });
  return cancelled;
}

/** The linked order must still be open for reclassify and set-location on a Linked alert. */
function requireEditable(alert: AlertRow, order: OrderRow | null, action: (typeof ACTION_NAMES)[keyof typeof ACTION_NAMES]): void {
  if (alert.status === 'Pending') return;
  if (alert.status === 'Linked' && order && OPEN_ORDER_STATUSES.has(order.status)) return;
  if (alert.status === 'Linked' && order) throw new AppError('invalid-transition', { action: onOrder(action, order.number), state: statusWords(order.status) });
  throw new AppError('invalid-transition', { action, state: statusWords(alert.status) });
}

/**
 * New internal reason: priority and SLA deadline follow. Pending, or Linked to an open
 * order (the order's type, priority and deadline follow too). No event: the status
 * does not change, and partners see the order's new priority in their reads.
 */
export async function reclassifyAlert(deps: ServiceDeps, actor: Actor, alertId: string, reasonCode: string, lang: Language, undo?: UndoRequest): Promise<Alert> {
  if (!isUuid(alertId)) throw notFound(alertId);
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(reasonCode ?? '')) throw invalid('/reasonCode', 'must be a reason code');
  return operatorTransaction(deps, async (tx) => {
    const { alert, order } = await lockAlertAndOrder(tx, actor.access, alertId);
    requireEditable(alert, order, ACTION_NAMES.reclassify);
    const reason = await requireReason(tx, alert.tenant_id, reasonCode);
    const undoable = await beginUndoable(deps, tx, actor, alert.tenant_id, 'reclassify', [alert], order ? [order] : [], undo);
    await reclassifyLocked(tx, actor, alert, order, reason);
    await undoable?.finish();
    return viewInTx(tx, alert.id, lang);
  });
}

/**
 * The reclassify action on one alert (and its open order, if any) locked in `tx`, with
 * a reason of its tenant. Nothing is written when the reason is already the alert's
 * (and its order's).
 */
export async function reclassifyLocked(tx: Tx, actor: Actor, alert: AlertRow, order: OrderRow | null, reason: ReasonRow): Promise<AlertRow> {
  if (reason.code === alert.reason_code && (!order || order.reason_code === reason.code)) return alert;
  const slaDueAt = slaDue(alert, reason);
  const updated = await updateAlert(tx, alert.id, { reason_code: reason.code, priority: reason.priority, sla_due_at: slaDueAt });
  const after: Record<string, unknown> = alertSnapshot(updated);
  if (order) {
    const o = await updateOrder(tx, order.id, { reason_code: reason.code, priority: reason.priority, sla_due_at: slaDueAt });
    after.serviceOrder = orderSnapshot(o);
  }
  await recordAudit(tx, actor, {
    tenantId: alert.tenant_id,
    action: 'alert.reclassify',
    entityType: 'alert',
    entityId: alert.id,
    before: order ? { ...alertSnapshot(alert), serviceOrder: orderSnapshot(order) } : alertSnapshot(alert),
    after,
  });
  return updated;
}

/**
 * An operator's coordinates: the alert is geolocated from now on (source operator).
 * Pending, or Linked to an open order; an order without coordinates takes them, one
 * that has coordinates keeps them (an order's location never moves silently).
 */
export async function setAlertLocation(deps: ServiceDeps, actor: Actor, alertId: string, latitude: number, longitude: number, lang: Language, confirmOutside = false): Promise<Alert> {
  if (!isUuid(alertId)) throw notFound(alertId);
  const errors: FieldError[] = [];
  if (typeof latitude !== 'number' || !Number.isFinite(latitude) || latitude < -90 || latitude > 90) errors.push({ pointer: '/latitude', message: 'must be a number from -90 to 90' });
  if (typeof longitude !== 'number' || !Number.isFinite(longitude) || longitude < -180 || longitude > 180) errors.push({ pointer: '/longitude', message: 'must be a number from -180 to 180' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  return operatorTransaction(deps, async (tx) => {
    const { alert, order } = await lockAlertAndOrder(tx, actor.access, alertId);
    requireEditable(alert, order, ACTION_NAMES.setLocation);
    if (!confirmOutside) {
      const tenant = (await findTenant(tx, alert.tenant_id))!;
      const doubt = await doubtAbout(tx, tenant, latitude, longitude);
      if (doubt) throw locationUnconfirmed(doubt, tenant.name);
    }
    const updated = await updateAlert(tx, alert.id, { latitude, longitude, location_source: 'operator' });
    const after: Record<string, unknown> = alertSnapshot(updated);
    let before: Record<string, unknown> = alertSnapshot(alert);
    if (order && order.latitude === null) {
      const poleId = order.pole_id ?? (await poleForOrder(deps, tx, order.tenant_id, undefined, { latitude, longitude }));
      const o = await updateOrder(tx, order.id, { latitude, longitude, pole_id: poleId });
      before = { ...before, serviceOrder: orderSnapshot(order) };
      after.serviceOrder = orderSnapshot(o);
    }
    await recordAudit(tx, actor, { tenantId: alert.tenant_id, action: 'alert.set-location', entityType: 'alert', entityId: alert.id, before, after });
    return viewInTx(tx, alert.id, lang);
  });
}
