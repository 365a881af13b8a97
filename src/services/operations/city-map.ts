import type { CityMap, CityMapCounts } from '../../../generated/admin/types.gen.js';
import { cityCells, cityPoles, FINEST_LEVEL, type Box, type CityMapFilter, type DeviceState } from '../../db/repositories/operations/city-map.repository.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { ServiceDeps } from '../deps.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import { isUuid } from '../tenants/index.js';
import { resolveTeam } from './resolve.js';

/** From this zoom a view with few enough poles answers them one by one. */
export const CITY_MAP_POLE_ZOOM = 17;
export const CITY_MAP_LIMIT_DEFAULT = 1000;
export const CITY_MAP_LIMIT_MAX = 2000;
/** Cells of about 64 screen pixels: four a side per 256-pixel tile. */
const CELL_LEVELS_ABOVE_ZOOM = 2;

export interface CityMapInput {
  tenantId: string;
  zoom: number | string;
  /** "south,west,north,east"; the whole city when absent. */
  bbox?: string;
  priority?: string;
  reason?: string;
  /** A team of the tenant, by id or name. */
  team?: string;
  overdue?: boolean | string;
  telegestor?: string;
  limit?: number | string;
}

const PRIORITIES = ['Low', 'Medium', 'High', 'Critical'];
const DEVICE_STATES: readonly DeviceState[] = ['online', 'off', 'unknown'];

function parseBox(raw: string): Box | null {
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length !== 4 || parts.some((p) => !/^-?\d+(\.\d+)?$/.test(p))) return null;
  const [south, west, north, east] = parts.map(Number) as [number, number, number, number];
  if (south > north || west > east || Math.abs(south) > 90 || Math.abs(north) > 90 || Math.abs(west) > 180 || Math.abs(east) > 180) return null;
  return { south, west, north, east };
}

/** The box of a web-mercator cell. */
function cellBounds(level: number, x: number, y: number): Box {
  const n = 2 ** level;
  const lat = (row: number) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * row) / n))) * 180) / Math.PI;
  return { west: (x / n) * 360 - 180, east: ((x + 1) / n) * 360 - 180, north: lat(y), south: lat(y + 1) };
}

const round = (v: number) => Math.round(v * 1e6) / 1e6;

/**
 * The city map at a zoom: every active pole of the tenant in the view, as cells of
 * about 64 pixels counted by state (never "zoom in to see"), or, from zoom 17 with at
 * most `limit` poles in the box, the poles themselves. Any role on the tenant.
 */
export async function cityMap(deps: ServiceDeps, access: AdminAccess, input: CityMapInput): Promise<CityMap> {
  const resource = `tenant ${input.tenantId}`;
  if (!isUuid(input.tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, input.tenantId, 'viewer', resource);
  const errors: FieldError[] = [];
  const zoom = Number(input.zoom);
  if (!Number.isInteger(zoom) || zoom < 0 || zoom > 22) errors.push({ pointer: '/query/zoom', message: 'must be a whole number from 0 to 22' });
  const box = input.bbox === undefined ? null : parseBox(input.bbox);
  if (input.bbox !== undefined && !box) errors.push({ pointer: '/query/bbox', message: 'must be south,west,north,east in degrees, south <= north and west <= east' });
  if (input.priority !== undefined && !PRIORITIES.includes(input.priority)) errors.push({ pointer: '/query/priority', message: `must be one of ${PRIORITIES.join(', ')}` });
  if (input.telegestor !== undefined && !(DEVICE_STATES as readonly string[]).includes(input.telegestor)) errors.push({ pointer: '/query/telegestor', message: 'must be online, off or unknown' });
  const limit = input.limit === undefined ? CITY_MAP_LIMIT_DEFAULT : Number(input.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > CITY_MAP_LIMIT_MAX) errors.push({ pointer: '/query/limit', message: `must be a whole number from 1 to ${CITY_MAP_LIMIT_MAX}` });
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  if (!(await findTenant(deps.db, input.tenantId))) throw new AppError('not-found', { resource });

  const filter: CityMapFilter = {
    ...(input.priority !== undefined ? { priority: input.priority } : {}),
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    ...(input.team !== undefined ? { teamId: (await resolveTeam(deps.db, access, input.team, input.tenantId)).id } : {}),
    ...(input.overdue === true || input.overdue === 'true' ? { overdue: true } : {}),
    ...(input.telegestor !== undefined ? { telegestor: input.telegestor as DeviceState } : {}),
  };

  const total: CityMapCounts = { count: 0, alert: 0, order: 0, off: 0, unknown: 0, ok: 0 };
  if (box && zoom >= CITY_MAP_POLE_ZOOM) {
    const poles = await cityPoles(deps.db, input.tenantId, box, filter, limit);
    if (poles.length <= limit) {
      for (const p of poles) {
        total[p.state]++;
        total.count++;
      }
      return { zoom, mode: 'poles', total, cells: [], poles: poles.map((p) => ({ id: p.id, code: p.code, address: p.address, latitude: p.latitude, longitude: p.longitude, state: p.state })) };
    }
  }
  const level = Math.min(zoom + CELL_LEVELS_ABOVE_ZOOM, FINEST_LEVEL);
  const rows = await cityCells(deps.db, input.tenantId, level, box, filter);
  const cells = rows.map((r) => {
    const states: CityMapCounts = { count: r.alert + r.order + r.off + r.unknown + r.ok, alert: r.alert, order: r.order, off: r.off, unknown: r.unknown, ok: r.ok };
    for (const k of Object.keys(total) as (keyof CityMapCounts)[]) total[k] += states[k];
    const b = cellBounds(level, r.x, r.y);
    return {
      key: `${level}:${r.x}:${r.y}`,
      count: states.count,
      latitude: round(r.latitude),
      longitude: round(r.longitude),
      states,
      bounds: { south: round(b.south), west: round(b.west), north: round(b.north), east: round(b.east) },
    };
  });
  return { zoom, mode: 'cells', total, cells, poles: [] };
}
