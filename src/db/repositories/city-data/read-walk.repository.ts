import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../database.js';
import type { CityResource } from '../../tables/city-data.js';
import { microsIso, type Position } from './position.repository.js';

/**
 * Page walks (4.3 `page`) and what they remember: where each served page ended
 * (city_read_checkpoint), the rank of such a position when it is known, and the
 * cached totals of updatedSince filters (city_read_total). All of it is a cache:
 * losing any of it costs a slower or less strictly placed page, never an item.
 */

/** A page walk: one ExternalSystem reading one list with one (updatedSince, pageSize). */
export interface WalkKey {
  readonly externalSystemId: string;
  readonly tenantId: string;
  readonly resource: CityResource;
  /** ISO instant, or null for a walk without updatedSince. */
  readonly since: string | null;
  readonly pageSize: number;
}

/**
 * A set of the tenant's rows fixed at one snapshot: the rows stamped below `horizon`
 * then, `below` of them. See src/services/city-data/total.ts.
 */
export interface Epoch {
  /** Microseconds ISO. */
  readonly horizon: string;
  readonly below: number;
}

/** A position's rank (items of the filter up to and including it), exact while its epoch holds. */
export interface Rank extends Epoch {
  readonly rank: number;
}

/** Cached total of an updatedSince filter: the matching items below the epoch's horizon. */
export interface TotalCache extends Epoch {
  readonly matchingBelow: number;
}

export interface Checkpoint {
  /** The page whose end this is. */
  readonly page: number;
  /** Its last item; null when the list was empty there. */
  readonly position: Position | null;
  readonly rank: Rank | null;
}

export interface RankedPosition {
  readonly position: Position;
  readonly rank: Rank;
}

export interface ReadStart {
  /** The visibility horizon (microseconds ISO), read by this statement before any row of the list. */
  readonly horizon: string;
  readonly total: TotalCache | null;
  /** The walk's checkpoint closest before the page (pages > 1). */
  readonly checkpoint: Checkpoint | null;
  /** The ranked position of any walk of the tenant with this filter, closest at or before `target` items. */
  readonly ranked: RankedPosition | null;
}

const sinceValue = (since: string | null) => sql<Date>`${since ?? '-infinity'}::timestamptz`;

/** The walk's row (city_read_walk `w`), for a statement that reads what the walk remembers. */
const theWalk = (key: WalkKey) =>
  sql`w.external_system_id = ${key.externalSystemId} AND w.resource = ${key.resource} AND w.updated_since = ${sinceValue(key.since)} AND w.page_size = ${key.pageSize}`;

/**
 * The least horizon page `page` of the walk reads at: the horizon its nearest earlier
 * page was read at (0110_walk_read_horizon.sql), on the primary; null on a standby (it
 * may not have replayed as far as the server that page was read on), for page 1 and
 * when the walk remembers none. Every transaction a later snapshot of the same server
 * does not see was unseen by that page's snapshot too, so it stamps at or after that
 * horizon: the bound is a valid horizon, and the page cannot stop short of where the
 * walk stood because a transaction older than the walk took its id in between.
 */
export function walkHorizonFloor(key: WalkKey, page: number): RawBuilder<string | null> {
  if (page <= 1) return sql<null>`NULL::timestamptz`;
  return sql<string | null>`(SELECT c.read_horizon FROM city_read_walk w
    CROSS JOIN LATERAL (SELECT c.read_horizon FROM city_read_checkpoint c WHERE c.walk_id = w.id AND c.page < ${page} ORDER BY c.page DESC LIMIT 1) c
    WHERE ${theWalk(key)} AND NOT pg_is_in_recovery())`;
}

export interface ReadStartRow {
  h: string;
  t_matching: number | null;
  t_h: string | null;
  t_below: number | null;
  c_page: number | null;
  c_u: string | null;
  c_id: string | null;
  c_rank: number | null;
  c_h: string | null;
  c_below: number | null;
  r_rank: number | null;
  r_u: string | null;
  r_id: string | null;
  r_h: string | null;
  r_below: number | null;
}

/**
 * One statement before the page is read: the visibility horizon (0016_visibility_horizon.sql;
 * the page's own statement then comes after it), the cached total of the filter,
 * and for a page > 1 the walk's nearest checkpoint and, unless that is the end of the
 * page before, the best ranked position of the tenant's walks with the same filter at
 * or before `target` items. `horizon`: the
 * expression of the horizon (the page statement that reads the start itself gives its own).
 */
export function readStartStatement(key: WalkKey, page: number, target: number, horizon: RawBuilder<unknown> = sql`greatest(lumen_visibility_horizon(), ${walkHorizonFloor(key, page)})`) {
  const total: RawBuilder<unknown> =
    key.since === null
      ? sql`LEFT JOIN city_read_total t ON false`
      : sql`LEFT JOIN city_read_total t ON t.tenant_id = ${key.tenantId} AND t.resource = ${key.resource} AND t.updated_since = ${key.since}::timestamptz`;
  const none = sql`(SELECT NULL::int AS page, NULL::text AS u, NULL::uuid AS id, NULL::bigint AS rank, NULL::text AS h, NULL::bigint AS below)`;
  // The walk's nearest checkpoint: the walk first (one at most), then its checkpoints
  // newest page first, so the index on (walk_id, page) gives the one row without
  // reading and sorting every earlier page of the walk.
  const checkpoint =
    page <= 1
      ? sql`LEFT JOIN ${none} cp ON true`
      : sql`LEFT JOIN LATERAL (
          SELECT c.page, ${microsIso('c.last_updated_at')} AS u, c.last_id AS id, c.rank, ${microsIso('c.rank_horizon')} AS h, c.rank_below AS below
            FROM city_read_walk w
           CROSS JOIN LATERAL (
             SELECT c.page, c.last_updated_at, c.last_id, c.rank, c.rank_horizon, c.rank_below FROM city_read_checkpoint c
              WHERE c.walk_id = w.id AND c.page < ${page}
              ORDER BY c.page DESC LIMIT 1) c
           WHERE ${theWalk(key)}) cp ON true`;
  // Not looked for when the checkpoint is the page before's: the page then continues after it (placePage).
  const ranked =
    page <= 1
      ? sql`LEFT JOIN ${none} r ON true`
      : sql`LEFT JOIN LATERAL (
          SELECT b.rank, ${microsIso('b.last_updated_at')} AS u, b.last_id AS id, ${microsIso('b.rank_horizon')} AS h, b.rank_below AS below
            FROM city_read_walk w
           CROSS JOIN LATERAL (
             SELECT c.rank, c.last_updated_at, c.last_id, c.rank_horizon, c.rank_below FROM city_read_checkpoint c
              WHERE c.walk_id = w.id AND c.rank <= ${target} AND c.last_id IS NOT NULL
              ORDER BY c.rank DESC LIMIT 1) b
           WHERE w.tenant_id = ${key.tenantId} AND w.resource = ${key.resource} AND w.updated_since = ${sinceValue(key.since)}
             AND cp.page IS DISTINCT FROM ${page - 1}
           ORDER BY b.rank DESC, b.rank_horizon DESC LIMIT 1) r ON true`;
  return sql<ReadStartRow>`SELECT to_char(${horizon} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS h,
       t.matching_below AS t_matching, ${microsIso('t.horizon')} AS t_h, t.below AS t_below,
       cp.page AS c_page, cp.u AS c_u, cp.id AS c_id, cp.rank AS c_rank, cp.h AS c_h, cp.below AS c_below,
       r.rank AS r_rank, r.u AS r_u, r.id AS r_id, r.h AS r_h, r.below AS r_below
  FROM (SELECT 1) one
  ${total}
  ${checkpoint}
  ${ranked}`;
}

function rankOf(rank: number | null, h: string | null, below: number | null): Rank | null {
  return rank === null || h === null || below === null ? null : { rank: Number(rank), horizon: h, below: Number(below) };
}

/** A row of readStartStatement (also read by the page statement that reads the start itself). */
export function readStartOf(r: ReadStartRow): ReadStart {
  const total = r.t_matching !== null && r.t_h !== null && r.t_below !== null ? { matchingBelow: Number(r.t_matching), horizon: r.t_h, below: Number(r.t_below) } : null;
  const checkpoint =
    r.c_page === null ? null : { page: r.c_page, position: r.c_u !== null && r.c_id !== null ? { u: r.c_u, id: r.c_id } : null, rank: rankOf(r.c_rank, r.c_h, r.c_below) };
  const rank = rankOf(r.r_rank, r.r_h, r.r_below);
  const ranked = rank !== null && r.r_u !== null && r.r_id !== null ? { position: { u: r.r_u, id: r.r_id }, rank } : null;
  return { horizon: r.h, total, checkpoint, ranked };
}

export async function readStart(db: Executor, key: WalkKey, page: number, target: number): Promise<ReadStart> {
  const { rows } = await readStartStatement(key, page, target).execute(db);
  return readStartOf(rows[0]!);
}

/** The visibility horizon alone, for reads that remember nothing (cursor pages). */
export async function readHorizon(db: Executor): Promise<string> {
  const { rows } = await sql<{ h: string }>`SELECT ${microsIso('h')} AS h FROM (SELECT lumen_visibility_horizon() AS h) x`.execute(db);
  return rows[0]!.h;
}

/**
 * The commit of these statements is asynchronous (synchronous_commit off for their
 * own transaction only, set inside the statement, so no extra round trip). What a
 * commit lost in a database crash (the last few hundred milliseconds of them) costs:
 * a checkpoint, so the walk's next page is placed by counting items from an earlier
 * page, the fallback documented for pages read out of order; a rank, so a page
 * requested out of order counts from an earlier position; a cached total, so it is
 * counted again; a walk's last use, so it is forgotten a little earlier. No item and
 * no change of an item: those live in the list tables, whose writers commit
 * synchronously. Cursor walks write nothing and are not affected.
 */
const ASYNC_COMMIT = sql`SELECT set_config('synchronous_commit', 'off', true) AS async_commit`;

const STALE = sql`now() - interval '24 hours'`;

export interface WalkPageWrite {
  readonly page: number;
  /** Page 1: a new walk begins; the walk's other pages are forgotten, and stale walks and totals of the partner and tenant. */
  readonly restart: boolean;
  /** Where the page ended, or null to keep no checkpoint (a page placed beyond the list's end). */
  readonly checkpoint: { readonly position: Position | null; readonly rank: Rank | null; /** The horizon the page was read at. */ readonly horizon: string } | null;
  /** The filter's total to cache (updatedSince walks). */
  readonly total: TotalCache | null;
}

/**
 * Everything a served page leaves behind, in one statement: the walk (created or
 * marked used), the page's checkpoint (later ones are forgotten: they continued an
 * older version of this page), the cached total.
 */
export function walkPageStatement(key: WalkKey, w: WalkPageWrite) {
  const since = sinceValue(key.since);
  const parts: RawBuilder<unknown>[] = [];
  if (w.restart) {
    parts.push(sql`stale AS (DELETE FROM city_read_walk WHERE external_system_id = ${key.externalSystemId} AND used_at < ${STALE}
      AND NOT (resource = ${key.resource} AND updated_since = ${since} AND page_size = ${key.pageSize}))`);
  }
  parts.push(sql`w AS (INSERT INTO city_read_walk (external_system_id, tenant_id, resource, updated_since, page_size)
      VALUES (${key.externalSystemId}, ${key.tenantId}, ${key.resource}, ${since}, ${key.pageSize})
      ON CONFLICT (external_system_id, resource, updated_since, page_size)
      DO UPDATE SET used_at = now()${w.restart ? sql`, started_at = now()` : sql``} RETURNING id)`);
  if (w.checkpoint) {
    parts.push(sql`later AS (DELETE FROM city_read_checkpoint c USING w WHERE c.walk_id = w.id AND c.page > ${w.page})`);
    const p = w.checkpoint.position;
    const r = w.checkpoint.rank;
    parts.push(sql`cp AS (INSERT INTO city_read_checkpoint (walk_id, page, last_updated_at, last_id, rank, rank_horizon, rank_below, read_horizon)
      SELECT w.id, ${w.page}, ${p?.u ?? null}::timestamptz, ${p?.id ?? null}::uuid, ${r?.rank ?? null}::bigint, ${r?.horizon ?? null}::timestamptz, ${r?.below ?? null}::bigint, ${w.checkpoint.horizon}::timestamptz FROM w
      ON CONFLICT (walk_id, page) DO UPDATE SET last_updated_at = excluded.last_updated_at, last_id = excluded.last_id,
        rank = excluded.rank, rank_horizon = excluded.rank_horizon, rank_below = excluded.rank_below, read_horizon = excluded.read_horizon)`);
  }
  if (w.total && key.since !== null) {
    const t = w.total;
    parts.push(sql`total AS (INSERT INTO city_read_total (tenant_id, resource, updated_since, matching_below, horizon, below)
      VALUES (${key.tenantId}, ${key.resource}, ${key.since}::timestamptz, ${t.matchingBelow}, ${t.horizon}::timestamptz, ${t.below})
      ON CONFLICT (tenant_id, resource, updated_since) DO UPDATE SET matching_below = excluded.matching_below,
        horizon = excluded.horizon, below = excluded.below, used_at = now())`);
  }
  if (w.restart) {
    parts.push(sql`stale_totals AS (DELETE FROM city_read_total WHERE tenant_id = ${key.tenantId} AND used_at < ${STALE}
      AND NOT (resource = ${key.resource} AND updated_since = ${since}))`);
  }
  return sql<{ async_commit: string }>`WITH ${sql.join(parts, sql`,\n`)}\n${ASYNC_COMMIT}`;
}

export async function saveWalkPage(db: Executor, key: WalkKey, w: WalkPageWrite): Promise<void> {
  await walkPageStatement(key, w).execute(db);
}

/**
 * Most walks a partner keeps and most cached totals a tenant keeps: a new row evicts
 * the least recently used past these (triggers of 0018_city_read_bounds.sql, which
 * hold the same numbers).
 */
export const WALKS_PER_PARTNER = 100;
export const TOTALS_PER_TENANT = 200;

/**
 * Walks (with their checkpoints) and cached totals unused for a day, of every tenant;
 * the eviction on insert bounds them per partner and tenant, this bounds them in time.
 */
export async function deleteUnusedReads(db: Executor): Promise<{ walks: number; totals: number }> {
  const { rows } = await sql<{ walks: string; totals: string }>`WITH walks AS (DELETE FROM city_read_walk WHERE used_at < ${STALE} RETURNING 1),
    totals AS (DELETE FROM city_read_total WHERE used_at < ${STALE} RETURNING 1)
    SELECT (SELECT count(*) FROM walks) AS walks, (SELECT count(*) FROM totals) AS totals`.execute(db);
  return { walks: Number(rows[0]!.walks), totals: Number(rows[0]!.totals) };
}

/**
 * Forgets the ranks of an epoch found broken (a row below its horizon changed):
 * every position ranked in it would fail the same check. One statement, committed
 * asynchronously like the checkpoints (a lost one only repeats the failed check).
 */
export async function forgetRanks(db: Executor, tenantId: string, resource: CityResource, epoch: Epoch): Promise<void> {
  await sql`WITH gone AS (
      UPDATE city_read_checkpoint c SET rank = NULL, rank_horizon = NULL, rank_below = NULL
        FROM city_read_walk w
       WHERE w.id = c.walk_id AND w.tenant_id = ${tenantId} AND w.resource = ${resource}
         AND c.rank_horizon = ${epoch.horizon}::timestamptz AND c.rank_below = ${epoch.below})
    ${ASYNC_COMMIT}`.execute(db);
}
