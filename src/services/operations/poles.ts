import { statusWords } from '../../lib/status-words.js';
import type { DuplicateSuggestions, MapPole, MapPoles, ServiceOrder } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Executor } from '../../db/database.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { findAlert } from '../../db/repositories/intake/alert.repository.js';
import { findTenantPole, nearestPoleId, openOrdersNear, polesInBox, polesNear, type MapPoleRow } from '../../db/repositories/operations/pole-map.repository.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { lockOrder, updateOrder } from '../../db/repositories/operations/triage.repository.js';
import { recordAudit, type Actor } from '../audit/index.js';
import { loadServiceOrder, serviceOrderView } from './order-view.js';
import type { Ref } from './resolve.js';
import { operatorTransaction } from './transaction.js';

/** Duplicate suggestions: open orders on the alert's pole or within this many metres of it. */
export const DUPLICATE_RADIUS_METERS = 50;
export const NEAR_RADIUS_DEFAULT = 100;
export const NEAR_RADIUS_MAX = 2000;
export const MAP_LIMIT_DEFAULT = 500;
export const MAP_LIMIT_MAX = 5000;

function telegestorState(online: boolean | null): MapPole['telegestorState'] {
  return online === true ? 'online' : online === false ? 'off' : 'unknown';
}

function mapPole(r: MapPoleRow): MapPole {
  return {
    id: r.id,
    code: r.code,
    address: r.address,
    neighborhood: r.neighborhood,
    latitude: r.latitude,
    longitude: r.longitude,
    distanceMeters: r.distance_m === null ? null : Math.round(r.distance_m * 10) / 10,
    telegestorState: r.device ? telegestorState(r.online) : 'unknown',
    telegestor: r.device ? { identifier: r.device, online: r.online, relayOn: r.relay_on, lastCommunicationAt: r.last_communication_at ? r.last_communication_at.toISOString() : null } : null,
  };
}

function numbers(raw: string, count: number): number[] | null {
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length !== count || parts.some((p) => !/^-?\d+(\.\d+)?$/.test(p))) return null;
  return parts.map(Number);
}

export interface MapPolesInput {
  tenantId: string;
  /** "latitude,longitude" */
  near?: string;
  radius?: number | string;
  /** "south,west,north,east" */
  bbox?: string;
  limit?: number | string;
}

/**
 * A tenant's active poles for the map, with their telegestor's state: near a point
 * (nearest first, within `radius` metres) or inside a box (at most `limit`, with
 * `truncated` when more are there: zoom in). Never the whole city at once.
 */
export async function mapPoles(deps: ServiceDeps, access: AdminAccess, input: MapPolesInput): Promise<MapPoles> {
  const resource = `tenant ${input.tenantId}`;
  if (!isUuid(input.tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, input.tenantId, 'viewer', resource);
  const errors: FieldError[] = [];
  if ((input.near === undefined) === (input.bbox === undefined)) errors.push({ pointer: '/query/near', message: 'give exactly one of near (latitude,longitude) or bbox (south,west,north,east)' });
  const point = input.near === undefined ? null : numbers(input.near, 2);
  if (input.near !== undefined && (!point || Math.abs(point[0]!) > 90 || Math.abs(point[1]!) > 180)) errors.push({ pointer: '/query/near', message: 'must be latitude,longitude in degrees' });
  const box = input.bbox === undefined ? null : numbers(input.bbox, 4);
  if (input.bbox !== undefined && (!box || box[0]! > box[2]! || box[1]! > box[3]! || box.some((v, i) => Math.abs(v) > (i % 2 === 0 ? 90 : 180)))) {
    errors.push({ pointer: '/query/bbox', message: 'must be south,west,north,east in degrees, south <= north and west <= east' });
  }
  const radius = input.radius === undefined ? NEAR_RADIUS_DEFAULT : Number(input.radius);
  if (!Number.isFinite(radius) || radius <= 0) errors.push({ pointer: '/query/radius', message: 'must be a positive number of metres' });
  const limit = input.limit === undefined ? MAP_LIMIT_DEFAULT : Number(input.limit);
  if (!Number.isInteger(limit) || limit < 1) errors.push({ pointer: '/query/limit', message: 'must be a whole number of at least 1' });
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  if (!(await findTenant(deps.db, input.tenantId))) throw new AppError('not-found', { resource });
  const cap = Math.min(limit, MAP_LIMIT_MAX);
  if (point) {
    const rows = await polesNear(deps.db, input.tenantId, point[0]!, point[1]!, Math.min(radius, NEAR_RADIUS_MAX), cap);
    return { items: rows.map(mapPole), truncated: false };
  }
  const rows = await polesInBox(deps.db, input.tenantId, { south: box![0]!, west: box![1]!, north: box![2]!, east: box![3]! }, cap);
  return { items: rows.slice(0, cap).map(mapPole), truncated: rows.length > cap };
}

/**
 * The pole an order made from an alert takes: the operator's pick (id or code, of the
 * alert's tenant; 422 at `pointer` when there is none), else the nearest active pole
 * within LUMEN_POLE_MATCH_METERS of the alert's coordinates, else none.
 */
export async function poleForOrder(deps: ServiceDeps, db: Executor, tenantId: string, pick: string | undefined, at: { latitude: number | null; longitude: number | null }, pointer = '/poleId'): Promise<string | null> {
  if (pick !== undefined) {
    const pole = await findTenantPole(db, tenantId, pick.trim(), isUuid(pick.trim()));
    if (!pole) throw new AppError('validation-failed', { count: 1 }, [{ pointer, message: 'no such pole (id or code) in the tenant' }]);
    return pole.id;
  }
  if (at.latitude === null || at.longitude === null) return null;
  return (await nearestPoleId(db, tenantId, at.latitude, at.longitude, deps.config.poleMatchMeters)) ?? null;
}

/**
 * Open orders an alert may duplicate: on the alert's pole (its order's, or the nearest
 * within LUMEN_POLE_MATCH_METERS) or within 50 m of its coordinates; those on the pole
 * first, then by distance. The alert's own order is left out. Link one with
 * POST /alerts/{alertId}/link.
 */
export async function duplicateSuggestions(deps: ServiceDeps, access: AdminAccess, ref: Ref): Promise<DuplicateSuggestions> {
  requireTenantRole(access, ref.tenantId, 'viewer', `alert ${ref.id}`);
  const alert = (await findAlert(deps.db, ref.id))!;
  const at = alert.latitude !== null && alert.longitude !== null ? { latitude: alert.latitude, longitude: alert.longitude } : null;
  const poleId = at ? ((await nearestPoleId(deps.db, alert.tenant_id, at.latitude, at.longitude, deps.config.poleMatchMeters)) ?? null) : null;
  const rows = await openOrdersNear(deps.db, alert.tenant_id, at, poleId, DUPLICATE_RADIUS_METERS, 21);
  return {
    alertId: alert.id,
    poleId,
    items: rows
      .filter((r) => r.id !== alert.service_order_id)
      .slice(0, 20)
      .map((r) => ({ serviceOrder: { id: r.id, number: r.number, status: r.status as never, address: r.address, poleId: r.pole_id }, samePole: r.same_pole, distanceMeters: r.distance_m === null ? null : Math.round(r.distance_m * 10) / 10 })),
  };
}

/**
 * Sets (or clears, with null) the pole of an open order: the operator's pick, by id or
 * code, of the order's tenant. No event: the status does not change; partners read the
 * new poleId with the order. Audited with the pole before and after.
 */
export async function setOrderPole(deps: ServiceDeps, by: Actor, ref: Ref, pole: string | null): Promise<ServiceOrder> {
  requireTenantRole(by.access, ref.tenantId, 'triager', `service order ${ref.id}`);
  return operatorTransaction(deps, async (tx) => {
    const order = (await lockOrder(tx, ref.id))!;
    if (!['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(order.status)) throw new AppError('invalid-transition', { action: SET_POLE, state: statusWords(order.status) });
    const poleId = pole === null ? null : await poleForOrder(deps, tx, order.tenant_id, pole, order);
    if (poleId === order.pole_id) return serviceOrderView((await loadServiceOrder(tx, order.id))!);
    await updateOrder(tx, order.id, { pole_id: poleId });
    await recordAudit(tx, by, { tenantId: order.tenant_id, action: 'service-order.set-pole', entityType: 'service_order', entityId: order.id, before: { poleId: order.pole_id }, after: { poleId } });
    return serviceOrderView((await loadServiceOrder(tx, order.id))!);
  });
}

const SET_POLE = { 'pt-BR': 'definir o poste da ordem de serviço', en: "set the service order's pole" };
