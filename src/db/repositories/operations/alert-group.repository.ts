import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from '../../database.js';

/**
 * Groups of Pending alerts, computed when read (issues 23 §1, 24 §2). Two Pending
 * alerts of one tenant are neighbours when
 *   - duplicate: they arrived at most `duplicate_window_hours` apart and lie within
 *     `duplicate_radius_meters` of each other or on the same pole (the nearest active
 *     pole within LUMEN_POLE_MATCH_METERS of each); or
 *   - supply fault: both are telemetry lamp-out alerts whose lamps went out at most
 *     `supply_fault_window_minutes` apart, and their poles share a circuit or lie
 *     within `supply_fault_radius_meters` of each other.
 * An alert's group is its neighbours. In the inbox a group is led by its oldest alert
 * (one with no older neighbour): the leader's row stands for the group and the
 * alerts next to a leader are not listed on their own. Everything is plain SQL
 * (no PostGIS): equirectangular distance after a box read through
 * alert_pending_position_idx, pole_tenant_position_idx or pole_tenant_circuit_idx.
 */

const M_PER_DEG = 111320;

function dist(latA: string, lonA: string, latB: string, lonB: string): string {
  return `(6371000 * sqrt(power(radians(${latB} - ${latA}), 2) + power(cos(radians((${latB} + ${latA}) / 2)) * radians(${lonB} - ${lonA}), 2)))`;
}

function box(lat: string, lon: string, latB: string, lonB: string, meters: string): string {
  const dLat = `(${meters}) / ${M_PER_DEG}.0`;
  const dLon = `(${meters}) / (${M_PER_DEG}.0 * greatest(cos(radians(${lat})), 0.01))`;
  return `${latB} BETWEEN ${lat} - ${dLat} AND ${lat} + ${dLat} AND ${lonB} BETWEEN ${lon} - ${dLon} AND ${lon} + ${dLon}`;
}

/**
 * The neighbours of the alert row aliased `x` as rows (id, supply, distance_m,
 * same_pole, circuit): a subquery to use in FROM (LATERAL) or EXISTS. `poleMeters` is
 * LUMEN_POLE_MATCH_METERS. Its own aliases are named after `x`, so one statement may
 * hold the neighbours of two rows, and the same call always writes the same text: the
 * statement is then prepared once per connection and keeps its plan (a counter in the
 * aliases made every request a new statement to parse and plan).
 */
export function neighboursOf(x: string, poleMeters: number, light = false): RawBuilder<unknown> {
  if (!/^[a-z][a-z0-9_]*$/.test(x)) throw new Error(`neighboursOf: not an alias: ${x}`);
  const [t, y, lx, px, py, ly, yy] = ['t', 'y', 'lx', 'px', 'py', 'ly', 'yy'].map((s) => `nb_${x}_${s}`) as [string, string, string, string, string, string, string];
  const pm = Number(poleMeters);
  const xPole = `lumen_nearest_pole(${x}.tenant_id, ${x}.latitude, ${x}.longitude, ${pm})`;
  const yPole = `lumen_nearest_pole(${y}.tenant_id, ${y}.latitude, ${y}.longitude, ${pm})`;
  const dXY = dist(`${x}.latitude`, `${x}.longitude`, `${y}.latitude`, `${y}.longitude`);
  const dP = dist(`${px}.latitude`, `${px}.longitude`, `${py}.latitude`, `${py}.longitude`);
  // The other dark poles are read per dark pole (LATERAL): through pole_tenant_circuit_idx
  // or pole_tenant_position_idx, whatever the statistics of a small telemetry table say.
  const supplyFrom = (join: string) => `
    SELECT n.id, true AS supply, n.distance_m, false AS same_pole, n.circuit
      FROM tenant ${t}
      JOIN telemetry_lamp_out ${lx} ON ${lx}.alert_id = ${x}.id
      JOIN pole ${px} ON ${px}.id = ${lx}.pole_id
      CROSS JOIN LATERAL (
        SELECT ${yy}.id, ${dP} AS distance_m, CASE WHEN ${px}.circuit = ${py}.circuit THEN ${px}.circuit END AS circuit
          FROM pole ${py}
          JOIN telemetry_lamp_out ${ly} ON ${ly}.pole_id = ${py}.id
          JOIN alert ${yy} ON ${yy}.id = ${ly}.alert_id AND ${yy}.tenant_id = ${x}.tenant_id AND ${yy}.status = 'Pending'
         WHERE ${py}.tenant_id = ${px}.tenant_id AND ${py}.id <> ${px}.id AND ${py}.active AND ${join}
           AND abs(extract(epoch FROM ${ly}.out_since - ${lx}.out_since)) <= ${t}.supply_fault_window_minutes * 60
        OFFSET 0) n
     WHERE ${t}.id = ${x}.tenant_id AND ${x}.status = 'Pending'`;
  return sql.raw(`(
    SELECT ${y}.id, false AS supply, ${light ? 'NULL::float8' : dXY} AS distance_m,
           ${light ? 'false' : `coalesce(${xPole} = ${yPole}, false)`} AS same_pole, NULL::text AS circuit
      FROM tenant ${t}
      JOIN alert ${y} ON ${y}.tenant_id = ${t}.id AND ${y}.status = 'Pending' AND ${y}.latitude IS NOT NULL AND ${y}.id <> ${x}.id
       AND ${box(`${x}.latitude`, `${x}.longitude`, `${y}.latitude`, `${y}.longitude`, `greatest(${t}.duplicate_radius_meters, ${2 * pm})`)}
       AND ${y}.created_at BETWEEN ${x}.created_at - make_interval(hours => ${t}.duplicate_window_hours) AND ${x}.created_at + make_interval(hours => ${t}.duplicate_window_hours)
     WHERE ${t}.id = ${x}.tenant_id AND ${x}.status = 'Pending' AND ${x}.latitude IS NOT NULL
       -- The pole lookups (two index reads each) only for a pair farther apart than the radius.
       AND (${dXY} <= ${t}.duplicate_radius_meters OR (${dXY} <= ${2 * pm} AND ${xPole} = ${yPole}))
    UNION ALL ${supplyFrom(`${px}.circuit IS NOT NULL AND ${py}.circuit = ${px}.circuit`)}
    UNION ALL ${supplyFrom(`(${px}.circuit IS NULL OR ${py}.circuit IS DISTINCT FROM ${px}.circuit) AND ${box(`${px}.latitude`, `${px}.longitude`, `${py}.latitude`, `${py}.longitude`, `${t}.supply_fault_radius_meters`)} AND ${dP} <= ${t}.supply_fault_radius_meters`)}
  )`);
}

/**
 * The alerts of `tenantId` that the grouped inbox leaves out: those next to a group's
 * leader (an older neighbour that has no older neighbour itself). Older: by
 * (created_at, alert_number). The inbox reads it through inboxHiddenAlerts (kept per
 * process while its inputs are unchanged) and hands it to its page and its count
 * (AlertFilter's `hidden`).
 *
 * Computed for the whole city at once, not per row: every neighbour pair of the city's
 * Pending alerts in one pass, then the leaders, then the alerts next to one. Asking
 * neighboursOf for each row, and again for each older neighbour, probed the position
 * index 10,000 times for an inbox of 10,000 Pending alerts, in the page and again in its
 * count (438-768 ms; most of the console's first load). Duplicate pairs come from a grid
 * whose cells are at least the duplicate reach (the larger of the city's radius and
 * twice LUMEN_POLE_MATCH_METERS) in both directions, so a pair is always in the same or
 * adjacent cells; each candidate pair then meets exactly the conditions of
 * neighboursOf's duplicate branch (the box around the first, the window, the distance
 * or the shared pole). Supply-fault pairs come from neighboursOf itself, for the city's
 * dark-pole alerts only.
 */
export async function groupedInboxHidden(db: Executor, tenantId: string, poleMeters: number): Promise<string[]> {
  const { rows } = await sql<{ ids: string[] }>`SELECT ARRAY(${groupedInboxHiddenQuery(tenantId, poleMeters)}) AS ids`.execute(db);
  return rows[0]?.ids ?? [];
}

/**
 * Everything groupedInboxHiddenQuery reads of a city, as one text that changes whenever
 * any of it does: its Pending alerts (their count and the sum of a hash of each row's id
 * seeded with its version, xmin: an alert that arrives, moves, leaves Pending or is
 * written at all changes it), its dark-pole records (the same, by pole: a record's
 * alert and times are in its version), its poles (pole_revision,
 * bumped by every statement that changes a pole's place, activity or circuit: migration
 * 0105) and its four grouping settings. The pole match distance is the process's own and
 * is part of the caller's key.
 */
export function groupedInboxInputs(tenantId: string): RawBuilder<string> {
  return sql<string>`concat_ws('|',
      (SELECT count(*) || ':' || coalesce(sum(uuid_hash_extended(a.id, a.xmin::text::bigint)), 0)
         FROM alert a WHERE a.tenant_id = ${tenantId} AND a.status = 'Pending'),
      (SELECT count(*) || ':' || coalesce(sum(uuid_hash_extended(lo.pole_id, lo.xmin::text::bigint)), 0)
         FROM telemetry_lamp_out lo WHERE lo.tenant_id = ${tenantId}),
      coalesce((SELECT r.revision FROM pole_revision r WHERE r.tenant_id = ${tenantId}), 0),
      (SELECT concat_ws(',', t.duplicate_radius_meters, t.duplicate_window_hours, t.supply_fault_radius_meters, t.supply_fault_window_minutes)
         FROM tenant t WHERE t.id = ${tenantId}))`;
}

/**
 * The city's inputs (groupedInboxInputs) and, unless they are `known`, the alerts the
 * grouped inbox leaves out: `ids` is null when the inputs are still `known`. The inputs
 * are read alone first, because PostgreSQL plans a statement whole before it runs it:
 * with the list's statement inside, every unchanged read paid for planning the list
 * (about 12 ms) even though the list was not computed. When they differ (or nothing is
 * known), one statement reads them again with the list, both from its one snapshot.
 */
export async function groupedInboxHiddenUnless(db: Executor, tenantId: string, poleMeters: number, known: string | null): Promise<{ inputs: string; ids: string[] | null }> {
  if (known !== null) {
    const { rows } = await sql<{ inputs: string }>`SELECT ${groupedInboxInputs(tenantId)} AS inputs`.execute(db);
    if (rows[0]!.inputs === known) return { inputs: known, ids: null };
  }
  const { rows } = await sql<{ inputs: string; ids: string[] }>`
    SELECT f.inputs, ARRAY(${groupedInboxHiddenQuery(tenantId, poleMeters)}) AS ids
      FROM (SELECT ${groupedInboxInputs(tenantId)} AS inputs OFFSET 0) f`.execute(db);
  const row = rows[0]!;
  return { inputs: row.inputs, ids: row.ids };
}

/**
 * True for an alert row aliased `a` whose id is not among `hidden`, for a statement that
 * reads all the rows it matches (a count): an anti-join, one pass over each side.
 */
export function notAmong(a: string, hidden: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`NOT EXISTS (SELECT 1 FROM unnest(${hidden as string[]}::uuid[]) h(id) WHERE h.id = ${sql.ref(`${a}.id`)})`;
}

/**
 * The same condition for a page read in an index's order up to a LIMIT: a filter that
 * looks each row up in the list hashed once (a hashed SubPlan), so the scan stays in the
 * index's order and stops at the page's end. As an anti-join under a LIMIT, PostgreSQL
 * picks a nested loop that reads the whole list for every row it passes (11 ms for a
 * page of 100 beside 1,000 left out, against 0.7 ms). `NOT IN` is exact here: neither
 * an id nor an element of the list is ever null.
 */
export function notAmongInOrder(a: string, hidden: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(`${a}.id`)} NOT IN (SELECT unnest(${hidden as string[]}::uuid[]))`;
}

/** The statement of groupedInboxHidden: one row (x) per alert left out. */
export function groupedInboxHiddenQuery(tenantId: string, poleMeters: number): RawBuilder<{ x: string }> {
  const pm = Number(poleMeters);
  const reach = `greatest(s.duplicate_radius_meters, ${2 * pm})`;
  const dXY = dist('k.x_latitude', 'k.x_longitude', 'y.latitude', 'y.longitude');
  const samePole = `lumen_nearest_pole(k.tenant_id, k.x_latitude, k.x_longitude, ${pm}) = lumen_nearest_pole(y.tenant_id, y.latitude, y.longitude, ${pm})`;
  return sql<{ x: string }>`
    WITH s AS MATERIALIZED (SELECT t.* FROM tenant t WHERE t.id = ${tenantId}),
    p AS MATERIALIZED (
      SELECT a2.id, a2.tenant_id, a2.status, a2.created_at, a2.alert_number, a2.latitude, a2.longitude FROM alert a2
       WHERE a2.tenant_id = ${tenantId} AND a2.status = 'Pending'),
    -- Grid cells in degrees: the reach as an angle (a little more, for rounding), its
    -- longitude width at the most poleward alert (the box's own floor of cos: 0.01).
    g AS MATERIALIZED (
      SELECT degrees(${sql.raw(reach)} / 6371000.0) * 1.01 AS lat_deg,
             degrees(${sql.raw(reach)} / 6371000.0) * 1.01 / greatest(min(cos(radians(p.latitude))), 0.01) AS lon_deg
        FROM p, s WHERE p.latitude IS NOT NULL GROUP BY s.duplicate_radius_meters),
    c AS MATERIALIZED (
      SELECT p.*, floor(p.latitude / g.lat_deg)::bigint AS gy, floor(p.longitude / g.lon_deg)::bigint AS gx
        FROM p, g WHERE p.latitude IS NOT NULL),
    -- Each alert with its cell and the eight around it as join keys.
    k AS MATERIALIZED (
      SELECT c.id AS x, c.tenant_id, c.created_at AS x_created_at, c.alert_number AS x_number, c.latitude AS x_latitude, c.longitude AS x_longitude,
             c.gy + dy.d AS gy, c.gx + dx.d AS gx
        FROM c, (VALUES (-1), (0), (1)) dy(d), (VALUES (-1), (0), (1)) dx(d)),
    -- Neighbour pairs whose second is the older (by arrival, then number).
    older AS MATERIALIZED (
      SELECT k.x, y.id AS y
        FROM k JOIN c y ON y.gy = k.gy AND y.gx = k.gx, s
       WHERE y.id <> k.x AND (y.created_at, y.alert_number) < (k.x_created_at, k.x_number)
         AND ${sql.raw(box('k.x_latitude', 'k.x_longitude', 'y.latitude', 'y.longitude', reach))}
         AND y.created_at >= k.x_created_at - make_interval(hours => s.duplicate_window_hours)
         AND (${sql.raw(dXY)} <= s.duplicate_radius_meters OR (${sql.raw(dXY)} <= ${sql.raw(String(2 * pm))} AND ${sql.raw(samePole)}))
      UNION
      SELECT x.id, n.id FROM p x CROSS JOIN LATERAL ${neighboursOf('x', pm, true)} n JOIN p y ON y.id = n.id
       WHERE n.supply AND (y.created_at, y.alert_number) < (x.created_at, x.alert_number)
         AND x.id IN (SELECT lo.alert_id FROM telemetry_lamp_out lo WHERE lo.tenant_id = ${tenantId}))
    -- Next to a leader: an older neighbour that has no older neighbour itself.
    SELECT DISTINCT o.x FROM older o
     WHERE NOT EXISTS (SELECT 1 FROM older l WHERE l.x = o.y)`;
}

export interface NeighbourRow {
  /** The alert whose neighbour this is. */
  of_id: string;
  id: string;
  alert_number: string;
  address_street: string;
  address_number: string | null;
  description: string;
  priority: string;
  reason_code: string;
  created_at: Date;
  supply: boolean;
  distance_m: number | null;
  same_pole: boolean;
  circuit: string | null;
}

/**
 * The neighbours of each of `ids` (one tenant's alerts), nearest first: one row per
 * pair (a pair that is both a duplicate and a supply fault counts once, as a supply
 * fault).
 */
export async function neighboursOfAlerts(db: Executor, tenantId: string, ids: readonly string[], poleMeters: number): Promise<NeighbourRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<NeighbourRow>`
    SELECT g.of_id, g.id, y.alert_number, y.address_street, y.address_number, y.description, y.priority, y.reason_code, y.created_at,
           g.supply, g.distance_m, g.same_pole, g.circuit
      FROM (SELECT x.id AS of_id, n.id, bool_or(n.supply) AS supply, min(n.distance_m) AS distance_m, bool_or(n.same_pole) AS same_pole, max(n.circuit) AS circuit
              FROM alert x CROSS JOIN LATERAL ${neighboursOf('x', poleMeters)} n
             WHERE x.tenant_id = ${tenantId} AND x.id = ANY(${ids as string[]}::uuid[])
             GROUP BY x.id, n.id) g
      JOIN alert y ON y.id = g.id
     ORDER BY g.of_id, g.same_pole DESC, g.distance_m, y.alert_number`.execute(db);
  return rows.map((r) => ({ ...r, alert_number: String(r.alert_number), distance_m: r.distance_m === null ? null : Number(r.distance_m) }));
}

/** The pole an alert is on and its circuit (telemetry: the dark pole; else the nearest within `poleMeters`). */
export async function poleOfAlert(db: Executor, alertId: string, poleMeters: number): Promise<{ id: string; code: string; circuit: string | null } | undefined> {
  const { rows } = await sql<{ id: string; code: string; circuit: string | null }>`
    SELECT p.id, p.code, p.circuit FROM alert a
      JOIN pole p ON p.id = coalesce((SELECT l.pole_id FROM telemetry_lamp_out l WHERE l.alert_id = a.id LIMIT 1), lumen_nearest_pole(a.tenant_id, a.latitude, a.longitude, ${poleMeters}::float8))
     WHERE a.id = ${alertId}`.execute(db);
  return rows[0];
}

export interface GroupingSettings {
  duplicate_radius_meters: number;
  duplicate_window_hours: number;
  supply_fault_radius_meters: number;
  supply_fault_window_minutes: number;
}

export async function findGroupingSettings(db: Executor, tenantId: string): Promise<GroupingSettings | undefined> {
  return db
    .selectFrom('tenant')
    .select(['duplicate_radius_meters', 'duplicate_window_hours', 'supply_fault_radius_meters', 'supply_fault_window_minutes'])
    .where('id', '=', tenantId)
    .executeTakeFirst();
}

export async function updateGroupingSettings(db: Executor, tenantId: string, patch: Partial<GroupingSettings>): Promise<GroupingSettings> {
  return db
    .updateTable('tenant')
    .set(patch)
    .where('id', '=', tenantId)
    .returning(['duplicate_radius_meters', 'duplicate_window_hours', 'supply_fault_radius_meters', 'supply_fault_window_minutes'])
    .executeTakeFirstOrThrow();
}

/** Suspected supply-fault groups of a tenant's Pending telemetry alerts, for the map: each dark pole with its neighbours' poles. */
export async function supplyFaultPoles(db: Executor, tenantId: string, poleMeters: number): Promise<{ alert_id: string; alert_number: string; latitude: number; longitude: number; code: string; circuit: string | null; neighbours: number }[]> {
  const { rows } = await sql<{ alert_id: string; alert_number: string; latitude: number; longitude: number; code: string; circuit: string | null; neighbours: number }>`
    SELECT x.id AS alert_id, x.alert_number::text AS alert_number, p.latitude, p.longitude, p.code, p.circuit, s.neighbours
      FROM telemetry_lamp_out l
      JOIN alert x ON x.id = l.alert_id AND x.status = 'Pending'
      JOIN pole p ON p.id = l.pole_id
      CROSS JOIN LATERAL (SELECT count(DISTINCT n.id)::int AS neighbours FROM ${neighboursOf('x', poleMeters)} n WHERE n.supply) s
     WHERE l.tenant_id = ${tenantId} AND s.neighbours > 0
     ORDER BY x.alert_number
     LIMIT 2000`.execute(db);
  return rows;
}
