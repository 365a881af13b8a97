import { sql } from 'kysely';
import type { Executor, Tx } from '../database.js';
import type { CityResource } from '../tables/city-data.js';
import { microsIso, type Position } from './city-data.repository.js';

/** A page walk: one ExternalSystem reading one list with one (updatedSince, pageSize). */
export interface WalkKey {
  readonly externalSystemId: string;
  readonly resource: CityResource;
  /** ISO instant, or null for a walk without updatedSince. */
  readonly since: string | null;
  readonly pageSize: number;
}

export interface TotalCache {
  /** Rows matching updatedSince when counted. */
  readonly matching: number;
  /** The tenant's row and deletion counters in the same snapshot. */
  readonly rows: number;
  readonly deleted: number;
  /** Visibility horizon read before that count (microseconds ISO). */
  readonly horizon: string;
}

export interface WalkState {
  readonly id: string;
  readonly total: TotalCache | null;
}

const sinceValue = (since: string | null) => sql<Date>`${since ?? '-infinity'}::timestamptz`;

/**
 * Finds or creates the walk and marks it used. `restart` (page 1) forgets its
 * checkpoints and cached total: a new walk over the same parameters begins.
 */
export async function openWalk(tx: Tx, key: WalkKey, restart: boolean): Promise<WalkState> {
  const row = await tx
    .insertInto('city_read_walk')
    .values({ external_system_id: key.externalSystemId, resource: key.resource, updated_since: sinceValue(key.since), page_size: key.pageSize })
    .onConflict((oc) =>
      oc.columns(['external_system_id', 'resource', 'updated_since', 'page_size']).doUpdateSet(
        restart
          ? { used_at: sql`now()`, started_at: sql`now()`, total_count: null, total_rows: null, total_deleted: null, total_horizon: null }
          : { used_at: sql`now()` },
      ),
    )
    .returning(['id', 'total_count', 'total_rows', 'total_deleted', microsIso('total_horizon').as('total_horizon')])
    .executeTakeFirstOrThrow();
  if (restart) await tx.deleteFrom('city_read_checkpoint').where('walk_id', '=', row.id).execute();
  const total =
    row.total_count !== null && row.total_rows !== null && row.total_deleted !== null && row.total_horizon !== null
      ? { matching: Number(row.total_count), rows: Number(row.total_rows), deleted: Number(row.total_deleted), horizon: row.total_horizon }
      : null;
  return { id: row.id, total };
}

export interface Anchor {
  /** The page whose end this is (0 = the walk's start). */
  readonly page: number;
  readonly position: Position | null;
}

/** The checkpoint closest before `page` (the previous page in a sequential walk). */
export async function findAnchor(db: Executor, walkId: string, page: number): Promise<Anchor> {
  const row = await db
    .selectFrom('city_read_checkpoint')
    .select(['page', microsIso('last_updated_at').as('u'), 'last_id'])
    .where('walk_id', '=', walkId)
    .where('page', '<', page)
    .orderBy('page', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return { page: 0, position: null };
  return { page: row.page, position: row.last_id && row.u ? { u: row.u, id: row.last_id } : null };
}

/**
 * Records where `page` ended and forgets later checkpoints (they continued an older
 * version of this page).
 */
export async function saveCheckpoint(tx: Tx, walkId: string, page: number, position: Position | null): Promise<void> {
  await tx
    .insertInto('city_read_checkpoint')
    .values({ walk_id: walkId, page, last_updated_at: position?.u ?? null, last_id: position?.id ?? null })
    .onConflict((oc) => oc.columns(['walk_id', 'page']).doUpdateSet((eb) => ({ last_updated_at: eb.ref('excluded.last_updated_at'), last_id: eb.ref('excluded.last_id') })))
    .execute();
  await tx.deleteFrom('city_read_checkpoint').where('walk_id', '=', walkId).where('page', '>', page).execute();
}

export async function saveTotalCache(db: Executor, walkId: string, cache: TotalCache): Promise<void> {
  await db
    .updateTable('city_read_walk')
    .set({ total_count: cache.matching, total_rows: cache.rows, total_deleted: cache.deleted, total_horizon: cache.horizon })
    .where('id', '=', walkId)
    .execute();
}

/** Forgets an ExternalSystem's walks not used since `before`. */
export async function deleteStaleWalks(db: Executor, externalSystemId: string, before: Date): Promise<number> {
  const res = await db.deleteFrom('city_read_walk').where('external_system_id', '=', externalSystemId).where('used_at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}
