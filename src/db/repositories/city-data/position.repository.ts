import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../database.js';
import type { CityResource } from '../../tables/city-data.js';

/**
 * Reads of the two city-data lists (GET /api/external/poles and /service-orders);
 * the page statement itself is in repositories/city-data/page.repository.ts. Positions are
 * (updated_at, id) with updated_at as an ISO string with microseconds: the database
 * keeps microseconds, and a keyset position rounded to milliseconds would serve
 * items twice or loop forever on a page of same-millisecond items.
 */

/** updated_at as `2026-03-14T12:41:07.532123Z`, exact. */
export function microsIso(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

export interface Position {
  /** updated_at with microseconds (microsIso). */
  readonly u: string;
  readonly id: string;
}

export interface TenantCounter {
  /** Committed rows of the tenant. */
  rows: number;
  /** Rows ever deleted (only grows). */
  deleted: number;
}

/**
 * The trigger-kept row count of a tenant's list: the sum of its slots (migration
 * 0009), read by one statement so every slot comes from the same snapshot. No slot
 * yet = nothing ever inserted.
 */
export async function readCounter(db: Executor, tenantId: string, resource: CityResource): Promise<TenantCounter> {
  const row = await db
    .selectFrom('city_data_count')
    .select([sql<number>`coalesce(sum(row_count), 0)::bigint`.as('rows'), sql<number>`coalesce(sum(deleted_count), 0)::bigint`.as('deleted')])
    .where('tenant_id', '=', tenantId)
    .where('resource', '=', resource)
    .executeTakeFirstOrThrow();
  return { rows: Number(row.rows), deleted: Number(row.deleted) };
}

/** Rows stamped at or after `since`, and the counter (its slots summed), from one snapshot. */
export async function countSince(db: Executor, tenantId: string, resource: CityResource, since: string): Promise<TenantCounter & { matching: number }> {
  const { rows } = await sql<{ matching: number; rows: number; deleted: number }>`
    SELECT (SELECT count(*) FROM ${sql.table(resource)} WHERE tenant_id = ${tenantId} AND updated_at >= ${since}::timestamptz) AS matching,
           coalesce(sum(c.row_count), 0)::bigint AS rows, coalesce(sum(c.deleted_count), 0)::bigint AS deleted
      FROM city_data_count c
     WHERE c.tenant_id = ${tenantId} AND c.resource = ${resource}`.execute(db);
  const r = rows[0]!;
  return { matching: Number(r.matching), rows: Number(r.rows), deleted: Number(r.deleted) };
}
