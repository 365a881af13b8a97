import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../database.js';

/**
 * The city map's aggregate (migration 0093): poles counted per web-mercator cell from
 * the rollup pole_map_cell, with the poles that have open work (open orders, Pending
 * telemetry alerts) counted live and moved from their device's state to `alert` or
 * `order`. Plain SQL, no PostGIS. See docs/operations.md "The city map".
 */

/** Levels stored in pole_map_cell; a grid level g is read from the first one ≥ g. */
export const STORED_LEVELS = [14, 18] as const;
/** Finest grid the rollup answers; finer views read the poles themselves. */
export const FINEST_LEVEL = 18;

export type MapState = 'alert' | 'order' | 'off' | 'unknown' | 'ok';
export type DeviceState = 'online' | 'off' | 'unknown';

export interface CityMapFilter {
  priority?: string;
  reason?: string;
  teamId?: string;
  overdue?: boolean;
  telegestor?: DeviceState;
}

export interface Box {
  south: number;
  west: number;
  north: number;
  east: number;
}

export interface CellRow {
  x: number;
  y: number;
  alert: number;
  order: number;
  off: number;
  unknown: number;
  ok: number;
  latitude: number;
  longitude: number;
}

export interface MapPoleRow {
  id: string;
  code: string;
  address: string;
  latitude: number;
  longitude: number;
  state: MapState;
}

/** Whether any filter narrows the poles to those with matching open work. */
export function hasWorkFilter(f: CityMapFilter): boolean {
  return f.priority !== undefined || f.reason !== undefined || f.teamId !== undefined || f.overdue === true;
}

/**
 * The tenant's poles with open work that the filter keeps, each once, with its state
 * (`alert` before `order`) and its device's state: a few thousand rows in a big city.
 * Read from the open orders by pole (service_order_open_pole_idx) and the telemetry
 * alerts by tenant.
 */
function workPoles(tenantId: string, f: CityMapFilter): RawBuilder<unknown> {
  const orderWhere = [
    f.priority !== undefined ? sql`AND so.priority = ${f.priority}` : sql``,
    f.reason !== undefined ? sql`AND so.reason_code = ${f.reason}` : sql``,
    f.teamId !== undefined ? sql`AND so.team_id = ${f.teamId}::uuid` : sql``,
    f.overdue ? sql`AND so.sla_due_at < now()` : sql``,
  ];
  const alertWhere = [
    f.priority !== undefined ? sql`AND a.priority = ${f.priority}` : sql``,
    f.reason !== undefined ? sql`AND a.reason_code = ${f.reason}` : sql``,
    // A telemetry alert belongs to no team: a team filter keeps orders only.
    f.teamId !== undefined ? sql`AND false` : sql``,
    f.overdue ? sql`AND a.sla_due_at < now()` : sql``,
  ];
  return sql`
    SELECT p.id, p.code, p.address, p.latitude, p.longitude,
           CASE WHEN w.alert THEN 'alert' ELSE 'order' END AS state, lumen_map_state(g.online) AS device
      FROM (SELECT pole_id, bool_or(alert) AS alert
              FROM (SELECT so.pole_id, false AS alert FROM service_order so
                     WHERE so.tenant_id = ${tenantId} AND so.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND so.pole_id IS NOT NULL ${sql.join(orderWhere, sql` `)}
                    UNION ALL
                    SELECT l.pole_id, true FROM telemetry_lamp_out l JOIN alert a ON a.id = l.alert_id
                     WHERE l.tenant_id = ${tenantId} AND a.status = 'Pending' ${sql.join(alertWhere, sql` `)}) u
             GROUP BY pole_id) w
      JOIN pole p ON p.id = w.pole_id AND p.tenant_id = ${tenantId} AND p.active
      LEFT JOIN telegestor g ON g.pole_id = p.id`;
}

function deviceWhere(column: RawBuilder<unknown>, f: CityMapFilter): RawBuilder<unknown> {
  return f.telegestor === undefined ? sql`true` : sql`${column} = ${f.telegestor}`;
}

/**
 * The stored cells (level `level + shift`) inside the cells of `level` that touch the
 * box: a cell of the view is counted whole or not at all (y grows southwards).
 */
function cellRange(box: Box | null, level: number, shift: number): RawBuilder<unknown> {
  if (!box) return sql`true`;
  return sql`x BETWEEN lumen_map_x(${box.west}::float8, ${level}::int) << ${shift}::int AND ((lumen_map_x(${box.east}::float8, ${level}::int) + 1) << ${shift}::int) - 1
         AND y BETWEEN lumen_map_y(${box.north}::float8, ${level}::int) << ${shift}::int AND ((lumen_map_y(${box.south}::float8, ${level}::int) + 1) << ${shift}::int) - 1`;
}

/**
 * The aggregate at grid level `level` (≤ FINEST_LEVEL): one row per non-empty cell
 * that touches `box` (null: the whole city), counted by state. Without a work filter:
 * the rollup's cells, minus each pole with open work in its device's state, plus that
 * pole as `alert` or `order`. With one: only the poles with matching open work.
 */
export function cityCellsQuery(tenantId: string, level: number, box: Box | null, f: CityMapFilter): RawBuilder<CellRow> {
  const stored = STORED_LEVELS.find((l) => l >= level)!;
  const shift = stored - level;
  const work = workPoles(tenantId, f);
  const onlyWork = hasWorkFilter(f);
  const states = (['online', 'off', 'unknown'] as const).filter((s) => f.telegestor === undefined || f.telegestor === s);
  const rollup = onlyWork
    ? []
    : states.map(
        (s) => sql`
      SELECT x >> ${shift}::int AS x, y >> ${shift}::int AS y, ${s}::text AS state, ${sql.ref(s)} AS n, ${sql.ref(`${s}_lat`)} AS slat, ${sql.ref(`${s}_lon`)} AS slon
        FROM pole_map_cell
       WHERE tenant_id = ${tenantId} AND level = ${stored}::smallint AND ${cellRange(box, level, shift)} AND ${sql.ref(s)} <> 0`,
      );
  const moved = onlyWork
    ? []
    : [
        sql`SELECT x, y, device AS state, -1 AS n, -latitude AS slat, -longitude AS slon FROM w`,
      ];
  const parts = [...rollup, ...moved, sql`SELECT x, y, state, 1 AS n, latitude AS slat, longitude AS slon FROM w`];
  return sql<CellRow>`
    WITH w AS MATERIALIZED (
      SELECT * FROM (
        SELECT k.*, lumen_map_x(k.longitude, ${level}::int) AS x, lumen_map_y(k.latitude, ${level}::int) AS y
          FROM (${work}) k
         WHERE ${deviceWhere(sql.ref('k.device'), f)}) v
       WHERE ${cellRange(box, level, 0)}
    )
    SELECT x, y,
           coalesce(sum(n) FILTER (WHERE state = 'alert'), 0)::int AS alert,
           coalesce(sum(n) FILTER (WHERE state = 'order'), 0)::int AS "order",
           coalesce(sum(n) FILTER (WHERE state = 'off'), 0)::int AS off,
           coalesce(sum(n) FILTER (WHERE state = 'unknown'), 0)::int AS unknown,
           coalesce(sum(n) FILTER (WHERE state = 'online'), 0)::int AS ok,
           sum(slat) / sum(n) AS latitude, sum(slon) / sum(n) AS longitude
      FROM (${sql.join(parts, sql` UNION ALL `)}) c
     GROUP BY x, y
    HAVING sum(n) > 0
     ORDER BY x, y`;
}

export async function cityCells(db: Executor, tenantId: string, level: number, box: Box | null, f: CityMapFilter): Promise<CellRow[]> {
  const { rows } = await cityCellsQuery(tenantId, level, box, f).execute(db);
  return rows.map((r) => ({ ...r, latitude: Number(r.latitude), longitude: Number(r.longitude) }));
}

/**
 * The active poles inside `box` one by one with their state, at most `limit` + 1 (the
 * caller learns whether more are there). Through pole_tenant_position_idx, with the
 * open work of the tenant joined by pole.
 */
export async function cityPoles(db: Executor, tenantId: string, box: Box, f: CityMapFilter, limit: number): Promise<MapPoleRow[]> {
  return (await cityPolesQuery(tenantId, box, f, limit).execute(db)).rows;
}

export function cityPolesQuery(tenantId: string, box: Box, f: CityMapFilter, limit: number): RawBuilder<MapPoleRow> {
  const onlyWork = hasWorkFilter(f);
  return sql<MapPoleRow>`
    WITH w AS MATERIALIZED (${workPoles(tenantId, f)})
    SELECT p.id, p.code, p.address, p.latitude, p.longitude,
           coalesce(w.state, CASE lumen_map_state(g.online) WHEN 'online' THEN 'ok' ELSE lumen_map_state(g.online) END) AS state
      FROM pole p
      LEFT JOIN telegestor g ON g.pole_id = p.id
      ${onlyWork ? sql`JOIN` : sql`LEFT JOIN`} w ON w.id = p.id
     WHERE p.tenant_id = ${tenantId} AND p.active
       AND p.latitude BETWEEN ${box.south} AND ${box.north} AND p.longitude BETWEEN ${box.west} AND ${box.east}
       AND ${deviceWhere(sql`lumen_map_state(g.online)`, f)}
     ORDER BY p.code
     LIMIT ${limit + 1}`;
}
