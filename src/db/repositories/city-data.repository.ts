import { sql, type QueryCreator, type RawBuilder } from 'kysely';
import type { Executor } from '../database.js';
import type { DB } from '../schema.js';
import type { CityResource } from '../tables/city-data.js';

/**
 * Reads of the two city-data lists (GET /api/external/poles and /service-orders).
 * Positions are (updated_at, id) with updated_at as an ISO string with microseconds:
 * the database keeps microseconds, and a keyset position rounded to milliseconds
 * would serve items twice or loop forever on a page of same-millisecond items.
 */

/** updated_at as `2026-03-14T12:41:07.532123Z`, exact. */
export function microsIso(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

const ts = (iso: string): RawBuilder<Date> => sql<Date>`${iso}::timestamptz`;

export interface Position {
  /** updated_at with microseconds (microsIso). */
  readonly u: string;
  readonly id: string;
}

export interface PageQuery {
  readonly tenantId: string;
  /** Inclusive lower bound (updatedSince), or null. */
  readonly since: string | null;
  /** Exclusive upper bound: the visibility horizon read before this query. */
  readonly horizon: string;
  /** Exclusive keyset anchor: continue after this item; null = from the start. */
  readonly after: Position | null;
  /** Rows to skip after the anchor (0 in a keyset walk; OFFSET fallback otherwise). */
  readonly skip: number;
  readonly limit: number;
}

/**
 * The visibility horizon (0002_domain.sql), in its own statement and before the
 * statement that reads rows: every row stamped below it is committed or gone, so
 * what is served below it can never be joined later by an older stamp.
 */
export async function readHorizon(db: Executor): Promise<string> {
  const { rows } = await sql<{ h: string }>`SELECT to_char(lumen_visibility_horizon() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS h`.execute(db);
  return rows[0]!.h;
}

/**
 * The page's keys come from the (tenant_id, updated_at, id) index alone (an
 * index-only range scan that stops after skip + limit entries); only the rows of
 * the page are then joined with their telegestor or team.
 */
function keys(db: QueryCreator<DB>, table: 'pole' | 'service_order', q: PageQuery) {
  return db
    .selectFrom(table)
    .select(['id', 'updated_at'])
    .where('tenant_id', '=', q.tenantId)
    .$if(q.since !== null, (qb) => qb.where('updated_at', '>=', ts(q.since!)))
    .where('updated_at', '<', ts(q.horizon))
    .$if(q.after !== null, (qb) => qb.where((eb) => eb(eb.refTuple('updated_at', 'id'), '>', eb.tuple(ts(q.after!.u), sql<string>`${q.after!.id}::uuid`))))
    .orderBy('updated_at')
    .orderBy('id')
    .offset(q.skip)
    .limit(q.limit);
}

export function polePageQuery(db: Executor, q: PageQuery) {
  return db
    .with('k', (qc) => keys(qc, 'pole', q))
    .selectFrom('k')
    .innerJoin('pole as p', 'p.id', 'k.id')
    .leftJoin('telegestor as t', 't.pole_id', 'p.id')
    .select([
      'p.id',
      'p.code',
      'p.address',
      'p.neighborhood',
      'p.latitude',
      'p.longitude',
      'p.active',
      microsIso('p.updated_at').as('updated_us'),
      't.id as device_id',
      't.identifier as device_identifier',
      't.online as device_online',
      't.relay_on as device_relay_on',
      't.last_communication_at as device_last_communication_at',
    ])
    .orderBy('p.updated_at')
    .orderBy('p.id');
}

export type PoleListRow = Awaited<ReturnType<ReturnType<typeof polePageQuery>['execute']>>[number];

export function serviceOrderPageQuery(db: Executor, q: PageQuery) {
  return db
    .with('k', (qc) => keys(qc, 'service_order', q))
    .selectFrom('k')
    .innerJoin('service_order as so', 'so.id', 'k.id')
    .leftJoin('team as t', 't.id', 'so.team_id')
    .selectAll('so')
    .select(['t.name as team_name', microsIso('so.updated_at').as('updated_us')])
    .orderBy('so.updated_at')
    .orderBy('so.id');
}

export type ServiceOrderListRow = Awaited<ReturnType<ReturnType<typeof serviceOrderPageQuery>['execute']>>[number];

export interface TenantCounter {
  /** Committed rows of the tenant. */
  rows: number;
  /** Rows ever deleted (only grows). */
  deleted: number;
}

/** The trigger-kept row count of a tenant's list (no row yet = nothing ever inserted). */
export async function readCounter(db: Executor, tenantId: string, resource: CityResource): Promise<TenantCounter> {
  const row = await db
    .selectFrom('city_data_count')
    .select(['row_count', 'deleted_count'])
    .where('tenant_id', '=', tenantId)
    .where('resource', '=', resource)
    .executeTakeFirst();
  return { rows: row?.row_count ?? 0, deleted: row?.deleted_count ?? 0 };
}

/** Rows stamped at or after `since`, and the counter, from one snapshot. */
export async function countSince(db: Executor, tenantId: string, resource: CityResource, since: string): Promise<TenantCounter & { matching: number }> {
  const { rows } = await sql<{ matching: number; rows: number | null; deleted: number | null }>`
    SELECT (SELECT count(*) FROM ${sql.table(resource)} WHERE tenant_id = ${tenantId} AND updated_at >= ${since}::timestamptz) AS matching,
           c.row_count AS rows, c.deleted_count AS deleted
      FROM (SELECT 1) one
      LEFT JOIN city_data_count c ON c.tenant_id = ${tenantId} AND c.resource = ${resource}`.execute(db);
  const r = rows[0]!;
  return { matching: Number(r.matching), rows: Number(r.rows ?? 0), deleted: Number(r.deleted ?? 0) };
}
