/**
 * Where a city is: its extent (configured, else the box of its poles, kept by triggers
 * in 0084_city_extent.sql), the check that keeps a location an operator sets from
 * landing in the wrong place by one click, and the set-location map's place search.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { findTenant, type TenantRow } from '../../db/repositories/tenant.repository.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Language } from '../../lib/i18n.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import { isUuid } from '../tenants/index.js';
import { distanceWords, extentOf, metresBetween, metresToBox, type Extent } from './extent.js';
import { searchPlaces as search, type Place } from './places.js';

export { distanceWords, extentOf, metresBetween, metresToBox, type Extent } from './extent.js';
export type { Place } from './places.js';

/** A location within this of the extent's edge still counts as in the city (poles at the edge, a street just outside). */
export const EXTENT_MARGIN_M = 1000;

/** Why a location needs a confirmation, and how far it is. */
export interface LocationDoubt {
  check: 'outside-extent' | 'far-from-poles';
  distanceMeters: number;
}

/**
 * A location an operator is about to set: outside the city's extent (beyond the
 * margin), or farther than the city's location_check_meters from every active pole.
 * Null when neither (or when the city has no extent and no poles: nothing to check).
 */
export async function doubtAbout(db: Executor, tenant: TenantRow, latitude: number, longitude: number): Promise<LocationDoubt | null> {
  const where = extentOf(tenant);
  if (where) {
    const off = metresToBox(where.extent, latitude, longitude);
    if (off > EXTENT_MARGIN_M) return { check: 'outside-extent', distanceMeters: Math.round(off) };
  }
  if (tenant.pole_extent_south === null) return null;
  const nearest = await nearestPoleMetres(db, tenant.id, latitude, longitude, tenant.location_check_meters);
  if (nearest !== null && nearest > tenant.location_check_meters) return { check: 'far-from-poles', distanceMeters: Math.round(nearest) };
  return null;
}

/** The refusal of a doubtful location, in the operator's words (the console asks, then sends confirmOutside). */
export function locationUnconfirmed(doubt: LocationDoubt, cityName: string): AppError {
  const where = {
    'pt-BR': doubt.check === 'outside-extent' ? `Este ponto fica a ${distanceWords(doubt.distanceMeters, 'pt-BR')} da área de ${cityName}` : `Este ponto fica a ${distanceWords(doubt.distanceMeters, 'pt-BR')} do poste mais próximo de ${cityName}`,
    en: doubt.check === 'outside-extent' ? `This point is ${distanceWords(doubt.distanceMeters, 'en')} outside ${cityName}` : `This point is ${distanceWords(doubt.distanceMeters, 'en')} from the nearest pole of ${cityName}`,
  };
  return new AppError('location-unconfirmed', { where }, [{ pointer: '/confirmOutside', message: `must be true to save a location ${doubt.check === 'outside-extent' ? 'outside the city' : 'far from every pole'} (${doubt.distanceMeters} m)` }]);
}

/**
 * Metres to the nearest active pole of the tenant, looking in growing boxes around the
 * point (each an index range on pole_tenant_position_idx), so that the usual case (a
 * pole within `within` metres) reads a handful of rows; null when the tenant has none.
 */
async function nearestPoleMetres(db: Executor, tenantId: string, lat: number, lon: number, within: number): Promise<number | null> {
  for (const radius of [within, 2_000, 20_000, 200_000, null]) {
    const box = radius === null ? null : { dLat: radius / 111_320, dLon: radius / (111_320 * Math.max(0.01, Math.cos((lat * Math.PI) / 180))) };
    const { rows } = await sql<{ latitude: number; longitude: number }>`
      SELECT latitude, longitude FROM pole
       WHERE tenant_id = ${tenantId} AND active
         ${box ? sql`AND latitude BETWEEN ${lat - box.dLat} AND ${lat + box.dLat} AND longitude BETWEEN ${lon - box.dLon} AND ${lon + box.dLon}` : sql``}
       ORDER BY (latitude - ${lat}) ^ 2 + ((longitude - ${lon}) * ${Math.cos((lat * Math.PI) / 180)}) ^ 2
       LIMIT 1`.execute(db);
    const row = rows[0];
    if (!row) continue;
    const d = metresBetween(lat, lon, row.latitude, row.longitude);
    // The nearest in a box may not be the nearest overall unless it lies within the box's inscribed circle.
    if (radius === null || d <= radius) return d;
  }
  return null;
}

export interface SetExtentInput {
  extent?: Extent | null;
  locationCheckMeters?: number;
}

/** Configures a city's extent and location check distance (city-admin), audited. */
export async function setTenantExtent(deps: ServiceDeps, actor: Actor, tenantId: string, input: SetExtentInput): Promise<TenantRow> {
  const resource = `tenant ${tenantId}`;
  const errors: FieldError[] = [];
  const e = input.extent;
  if (e) {
    for (const [k, lo, hi] of [['south', -90, 90], ['north', -90, 90], ['west', -180, 180], ['east', -180, 180]] as const) {
      if (typeof e[k] !== 'number' || !Number.isFinite(e[k]) || e[k] < lo || e[k] > hi) errors.push({ pointer: `/extent/${k}`, message: `must be a number from ${lo} to ${hi}` });
    }
    if (errors.length === 0 && e.south >= e.north) errors.push({ pointer: '/extent/north', message: 'must be north of south' });
    if (errors.length === 0 && e.west >= e.east) errors.push({ pointer: '/extent/east', message: 'must be east of west (a box across the antimeridian is not supported)' });
  }
  const m = input.locationCheckMeters;
  if (m !== undefined && (!Number.isInteger(m) || m < 10 || m > 100_000)) errors.push({ pointer: '/locationCheckMeters', message: 'must be a whole number of metres from 10 to 100000' });
  if (input.extent === undefined && m === undefined) errors.push({ pointer: '', message: 'give extent, locationCheckMeters or both' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(actor.access, tenantId, 'city-admin', resource);
  return deps.db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('tenant').selectAll().where('id', '=', tenantId).forUpdate().executeTakeFirst();
    if (!row) throw new AppError('not-found', { resource });
    const updated = await tx
      .updateTable('tenant')
      .set({
        ...(e !== undefined ? { extent_south: e?.south ?? null, extent_west: e?.west ?? null, extent_north: e?.north ?? null, extent_east: e?.east ?? null } : {}),
        ...(m !== undefined ? { location_check_meters: m } : {}),
        updated_at: new Date(),
      })
      .where('id', '=', tenantId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, actor, {
      tenantId,
      action: 'tenant.set-extent',
      entityType: 'tenant',
      entityId: tenantId,
      before: { extent: extentOf(row)?.extent ?? null, extentSource: extentOf(row)?.source ?? null, locationCheckMeters: row.location_check_meters },
      after: { extent: extentOf(updated)?.extent ?? null, extentSource: extentOf(updated)?.source ?? null, locationCheckMeters: updated.location_check_meters },
    });
    return updated;
  });
}

/** Places in the city for the set-location search (triager and above); another city's id is not-found. */
export async function searchPlaces(deps: ServiceDeps, access: AdminAccess, tenantId: string, q: string, lang: Language, signal?: AbortSignal): Promise<{ items: Place[] }> {
  const resource = `tenant ${tenantId}`;
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, tenantId, 'triager', resource);
  const tenant = await findTenant(deps.db, tenantId);
  if (!tenant) throw new AppError('not-found', { resource });
  return { items: await search(deps, tenant, q.trim(), lang, signal) };
}
