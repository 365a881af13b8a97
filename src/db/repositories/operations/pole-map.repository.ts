import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../database.js';

export interface MapPoleRow {
  id: string;
  code: string;
  address: string;
  neighborhood: string;
  latitude: number;
  longitude: number;
  distance_m: number | null;
  device: string | null;
  online: boolean | null;
  relay_on: boolean | null;
  last_communication_at: Date | null;
}

const METERS_PER_DEGREE = 111_320;

/** Degrees of latitude and longitude that cover `meters` around a latitude (the box a radius search reads). */
export interface Box {
  south: number;
  north: number;
  west: number;
  east: number;
}

export function boxAround(latitude: number, longitude: number, meters: number): Box {
  const dLat = meters / METERS_PER_DEGREE;
  const dLon = meters / (METERS_PER_DEGREE * Math.max(Math.cos((latitude * Math.PI) / 180), 0.01));
  return { south: latitude - dLat, north: latitude + dLat, west: longitude - dLon, east: longitude + dLon };
}

/**
 * Metres between a row's coordinates and a point (equirectangular: exact enough within
 * a city, and cheap). `lat`/`lon` name the row's columns.
 */
export function distanceMeters(lat: RawBuilder<number>, lon: RawBuilder<number>, latitude: number, longitude: number): RawBuilder<number> {
  return sql<number>`(6371000 * sqrt(power(radians(${lat} - ${latitude}::float8), 2) + power(cos(radians((${lat} + ${latitude}::float8) / 2)) * radians(${lon} - ${longitude}::float8), 2)))`;
}

function poleQuery(db: Executor, tenantId: string) {
  return db
    .selectFrom('pole as p')
    .leftJoin('telegestor as g', 'g.pole_id', 'p.id')
    .select(['p.id', 'p.code', 'p.address', 'p.neighborhood', 'p.latitude', 'p.longitude', 'g.identifier as device', 'g.online', 'g.relay_on', 'g.last_communication_at'])
    .where('p.tenant_id', '=', tenantId)
    .where('p.active', '=', true);
}

/**
 * Active poles of a tenant within `meters` of a point, nearest first, at most `limit`.
 * Reads the box around the circle through pole_tenant_position_idx (0024).
 */
export async function polesNear(db: Executor, tenantId: string, latitude: number, longitude: number, meters: number, limit: number): Promise<MapPoleRow[]> {
  const distance = poleDistance(latitude, longitude);
  const rows = await poleQuery(db, tenantId)
    .select(distance.as('distance_m'))
    .where(withinCircle(latitude, longitude, meters))
    .orderBy(sql`distance_m`)
    .orderBy('p.id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, distance_m: Number(r.distance_m) }));
}

/** Metres from pole `p` to a point. */
const poleDistance = (latitude: number, longitude: number) => distanceMeters(sql.ref('p.latitude'), sql.ref('p.longitude'), latitude, longitude);

/** Pole `p` lies within `meters` of a point: the box around the circle (pole_tenant_position_idx), then the distance. */
function withinCircle(latitude: number, longitude: number, meters: number, box: Box = boxAround(latitude, longitude, meters)): RawBuilder<boolean> {
  return sql<boolean>`p.latitude >= ${box.south} AND p.latitude <= ${box.north} AND p.longitude >= ${box.west} AND p.longitude <= ${box.east} AND ${poleDistance(latitude, longitude)} <= ${meters}`;
}

/**
 * The id of the nearest active pole within `meters` (ties by id), as a subquery for the
 * statement that writes it (an automatic order's pole at intake): the pole
 * nearestPoleId finds, without a round trip of its own. NULL when none is that close.
 */
export function nearestPoleIdExpression(
  db: Executor,
  tenantId: string,
  latitude: number,
  longitude: number,
  meters: number,
  /** boxAround(latitude, longitude, meters), when the caller has it (a statement compiled once per shape takes it as values). */
  box: Box = boxAround(latitude, longitude, meters),
): RawBuilder<string | null> {
  if (meters <= 0) return sql<null>`NULL::uuid`;
  // `active` and the LIMIT as literals: the statement that writes the order is prepared
  // once (src/db/database.ts), and its generic plan can use the partial index (WHERE
  // active) and knows it reads one row; with them as parameters that plan could do
  // neither, so PostgreSQL planned the intake's write anew on every request.
  const q = db
    .selectFrom('pole as p')
    .select('p.id')
    .where('p.tenant_id', '=', tenantId)
    .where(sql<boolean>`p.active`)
    .where(withinCircle(latitude, longitude, meters, box))
    .orderBy(poleDistance(latitude, longitude))
    .orderBy('p.id')
    .limit(sql.lit(1));
  return sql<string | null>`(${q})`;
}

/** Active poles inside a box, in id order, at most `limit` (limit + 1 read: the caller learns whether more exist). */
export async function polesInBox(db: Executor, tenantId: string, box: { south: number; north: number; west: number; east: number }, limit: number): Promise<MapPoleRow[]> {
  const rows = await poleQuery(db, tenantId)
    .select(sql<null>`NULL::float8`.as('distance_m'))
    .where('p.latitude', '>=', box.south)
    .where('p.latitude', '<=', box.north)
    .where('p.longitude', '>=', box.west)
    .where('p.longitude', '<=', box.east)
    .orderBy('p.id')
    .limit(limit + 1)
    .execute();
  return rows as MapPoleRow[];
}

/** The nearest active pole within `meters`, or undefined: nearestPoleIdExpression's pole, read on its own. */
export async function nearestPoleId(db: Executor, tenantId: string, latitude: number, longitude: number, meters: number): Promise<string | undefined> {
  if (meters <= 0) return undefined;
  const { rows } = await sql<{ id: string | null }>`SELECT ${nearestPoleIdExpression(db, tenantId, latitude, longitude, meters)} AS id`.execute(db);
  return rows[0]?.id ?? undefined;
}

/** A pole of the tenant by id or code (an operator's pick). */
export async function findTenantPole(db: Executor, tenantId: string, ref: string, byId: boolean): Promise<{ id: string; code: string } | undefined> {
  return db
    .selectFrom('pole')
    .select(['id', 'code'])
    .where('tenant_id', '=', tenantId)
    .where(byId ? 'id' : 'code', '=', ref)
    .executeTakeFirst();
}

export interface NearOrderRow {
  id: string;
  number: string;
  status: string;
  address: string;
  pole_id: string | null;
  latitude: number | null;
  longitude: number | null;
  distance_m: number | null;
  same_pole: boolean;
}

/**
 * Open orders of a tenant on a pole or within `meters` of a point (either may be
 * absent): those on the pole first, then by distance, at most `limit`.
 */
export async function openOrdersNear(db: Executor, tenantId: string, at: { latitude: number; longitude: number } | null, poleId: string | null, meters: number, limit: number): Promise<NearOrderRow[]> {
  if (!at && !poleId) return [];
  const distance = at ? distanceMeters(sql.ref('so.latitude'), sql.ref('so.longitude'), at.latitude, at.longitude) : sql<number | null>`NULL::float8`;
  const box = at ? boxAround(at.latitude, at.longitude, meters) : null;
  const rows = await db
    .selectFrom('service_order as so')
    .select(['so.id', 'so.number', 'so.status', 'so.address', 'so.pole_id', 'so.latitude', 'so.longitude', distance.as('distance_m'), sql<boolean>`coalesce(so.pole_id = ${poleId}::uuid, false)`.as('same_pole')])
    .where('so.tenant_id', '=', tenantId)
    .where('so.status', 'in', ['OPEN', 'ASSIGNED', 'IN_PROGRESS'])
    .where((eb) => {
      const near = box
        ? eb.and([eb('so.latitude', '>=', box.south), eb('so.latitude', '<=', box.north), eb('so.longitude', '>=', box.west), eb('so.longitude', '<=', box.east), eb(distance, '<=', meters)])
        : null;
      const onPole = poleId ? eb('so.pole_id', '=', poleId) : null;
      return eb.or([near, onPole].filter((x): x is NonNullable<typeof x> => x !== null));
    })
    .orderBy(sql`same_pole`, 'desc')
    .orderBy(sql`distance_m`)
    .orderBy('so.id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, distance_m: r.distance_m === null ? null : Number(r.distance_m) }));
}
