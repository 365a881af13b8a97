import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../database.js';
import type { CityResource } from '../../tables/city-data.js';
import { microsIso, type Position } from './position.repository.js';
import { readStartOf, readStartStatement, walkHorizonFloor, type ReadStart, type ReadStartRow, type WalkKey } from './read-walk.repository.js';

/**
 * One page of a city-data list (GET /api/external/poles, /service-orders) in ONE
 * statement: the items as JSON text built by PostgreSQL, where the page ended, and
 * the counts `total` and the page's rank need, all from the same snapshot
 * (src/services/city-data/total.ts says why that matters).
 *
 * Items are written by the SQL functions of 0010_city_read_positions.sql, byte for
 * byte what JSON.stringify wrote for the rows node-postgres read before; Node puts
 * the text into the envelope without parsing it. Compiled SQL and plans:
 * test/city-data/__snapshots__/ and docs/sql/city-data-reads.md.
 */

/**
 * What to count for an updatedSince filter's `total` (src/services/city-data/total.ts):
 * its items below the horizon, [since, horizon) ("mid"), or the rows stamped before
 * since ("low"), whichever is smaller: an old updatedSince has few rows
 * below it, a recent one few items above it.
 */
export type MatchingCount =
  /** No updatedSince: `total` is the row count. */
  | { readonly kind: 'none' }
  /** updatedSince above the horizon: every matching item is recent, count them all ("mid" = items >= since). */
  | { readonly kind: 'above' }
  /**
   * side mid or low: count that side; mid-then-low: count mid up to half the rows,
   * and low when mid reached it. With `unless`, nothing is counted while that cached
   * total still holds (rows - tail(cacheHorizon) = cacheBelow).
   */
  | {
      readonly kind: 'count';
      readonly side: 'mid' | 'low' | 'mid-then-low';
      readonly unless: { readonly cacheHorizon: string; readonly cacheBelow: number } | null;
    };

export interface PageStatement {
  readonly tenantId: string;
  /** Inclusive lower bound (updatedSince, microseconds ISO), or null. */
  readonly since: string | null;
  /**
   * Exclusive upper bound: the visibility horizon, read by an earlier statement; null:
   * read by this statement itself, from its own snapshot (a page without updatedSince,
   * by cursor or by number, whose answer needs neither the horizon nor a count that
   * depends on it; a walk keeps ranks at it, which total.ts allows).
   */
  readonly horizon: string | null;
  /**
   * With `horizon` null: a lower bound of the horizon the statement reads, or null. A
   * horizon once read stays a valid horizon for every later snapshot of the same server
   * (every transaction a later snapshot does not see was unseen by the earlier one too,
   * so it stamps at or after the earlier horizon), while the horizon a later snapshot
   * reads can be lower: a transaction that started before it and takes its id only now
   * holds it back to its start. A cursor walk passes the horizon of its page before, so
   * its next page never stops short of where the walk already stood.
   */
  readonly floor?: string | null;
  /**
   * Exclusive keyset start; null = the start of the list. A WalkStart: what the walk
   * remembers, read by this statement (a page > 1 of a walk without updatedSince); the
   * page continues right after the walk's end of the page before, and reads no item
   * when the walk remembers no such end.
   */
  readonly after: Position | WalkStart | null;
  /** Items skipped after `after` (0 in an in-order walk; the OFFSET fallback otherwise). */
  readonly skip: number;
  /** Page size; one more item is read to tell whether more follow. */
  readonly limit: number;
  /** The horizon of a rank to check in this snapshot (its tail is returned), or null. */
  readonly rankHorizon: string | null;
  readonly matching: MatchingCount;
}

/** Page `page` of a walk, whose start (readStartStatement: checkpoint, ranked position at `target` items) the page statement reads. */
export interface WalkStart {
  readonly walk: WalkKey;
  readonly page: number;
  readonly target: number;
}

const isWalkStart = (a: PageStatement['after']): a is WalkStart => a !== null && 'walk' in a;

export interface PageResult {
  /**
   * The page's items as JSON values separated by commas, in pieces of ITEMS_PER_PIECE
   * items, each piece after the first starting with its comma: joined, they are the
   * items (none for no item).
   */
  readonly items: readonly string[];
  /** Items read: limit + 1 when more follow. */
  readonly fetched: number;
  /** The last item of the page, or null when the page is empty. */
  readonly last: Position | null;
  /** The tenant's rows of this list (trigger-kept counter). */
  readonly rows: number;
  /** Rows stamped at or after the statement's horizon. */
  readonly tailNow: number;
  /** Rows stamped at or after rankHorizon (null without one). */
  readonly tailRank: number | null;
  /** Rows stamped at or after the cached total's horizon (only with `unless`). */
  readonly tailCache: number | null;
  /** Items in [since, horizon) (>= since for `above`); null when not counted. When `low` was counted too, mid-then-low capped it: use low. */
  readonly mid: number | null;
  /** Rows stamped before since; null when not counted. */
  readonly low: number | null;
  /** The horizon this statement read from its own snapshot (microseconds ISO); null when it was given one. */
  readonly horizon: string | null;
  /** With a WalkStart: the walk's start as this statement read it (its horizon is the statement's). */
  readonly start: ReadStart | null;
}

/** One list: its table, the joins its items need, and how an item is written. */
interface ListShape {
  readonly table: CityResource;
  /** Alias of the list's table in the item expression. */
  readonly alias: string;
  /** Joins the item needs (after the list's table). */
  readonly joins: RawBuilder<unknown>;
  /** The item as JSON text. */
  readonly item: RawBuilder<string>;
}

const str = (col: string) => sql.raw(`to_json(${col})::text`);

/**
 * A Pole item (2.2): id, code, address, neighborhood, latitude, longitude, active,
 * updatedAt, device. Kept as JSON with the rows (generated columns of 0101: the pole's
 * part up to "device", and the telegestor's object), so a page only joins the texts.
 */
const POLE: ListShape = {
  table: 'pole',
  alias: 'p',
  joins: sql`LEFT JOIN telegestor t ON t.pole_id = p.id`,
  item: sql<string>`p.list_head || coalesce(t.list_item, 'null') || '}'`,
};

/** A ServiceOrder item (2.3), as serviceOrderView writes it (src/services/operations/order-view.ts). */
const SERVICE_ORDER: ListShape = {
  table: 'service_order',
  alias: 'so',
  joins: sql`LEFT JOIN team t ON t.id = so.team_id`,
  item: sql<string>`'{"id":"' || so.id || '","number":' || ${str('so.number')} || ',"status":' || ${str('so.status')}
    || ',"priority":' || ${str('so.priority')} || ',"type":' || ${str('so.reason_code')} || ',"address":' || ${str('so.address')}
    || ',"neighborhood":' || coalesce(${str('so.neighborhood')}, 'null') || ',"latitude":' || lumen_json_number(so.latitude)
    || ',"longitude":' || lumen_json_number(so.longitude) || ',"poleId":' || coalesce('"' || so.pole_id || '"', 'null')
    || ',"team":' || CASE WHEN so.team_id IS NULL THEN 'null'
      ELSE '{"id":"' || so.team_id || '","name":' || ${str("coalesce(t.name, '')")} || '}' END
    || ',"openedAt":' || lumen_json_instant(so.opened_at) || ',"updatedAt":' || lumen_json_instant(so.updated_at)
    || ',"closedAt":' || lumen_json_instant(so.closed_at) || '}'`,
};

const LIST_SHAPES: Readonly<Record<CityResource, ListShape>> = { pole: POLE, service_order: SERVICE_ORDER };

const ts = (iso: string) => sql`${iso}::timestamptz`;

/**
 * The statement's horizon: the value read earlier, or lumen_visibility_horizon() of this
 * statement's own snapshot, evaluated once (the `horizon` CTE). The argument of
 * src/services/city-data/total.ts holds for it as well: every transaction the snapshot
 * does not see stamps its rows at or after the horizon the same snapshot gives.
 */
const horizonOf = (q: Pick<PageStatement, 'horizon'>) => (q.horizon === null ? sql`(SELECT at FROM horizon)` : ts(q.horizon));

/**
 * How many rows an in-order page reads, as the statement's text carries it: a literal,
 * so that PostgreSQL's plan for the named statement can be its generic one, planned
 * once per connection. With `LIMIT $n` the generic plan is costed for a tenth of the
 * table, far above any custom plan, so every execution was planned anew (0.6-1.5 ms
 * of a 10 ms page on a 2-core machine). The literal is the page size rounded up to a
 * step (1, 2, 5 × 10^k) plus one, so the usual sizes (100, 500, 1000) read exactly
 * their rows and any page size makes one of a few texts: each distinct text is a
 * prepared statement on every connection, and a process names at most
 * MAX_NAMED_STATEMENTS of them (src/db/database.ts).
 */
function rowsToRead(limit: number): number {
  const step = LIMIT_STEPS.find((s) => s >= limit) ?? limit;
  return step + 1;
}
const LIMIT_STEPS = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/**
 * A keyset position in the statement, hidden from the planner as a scalar subquery:
 * the custom plan of a known position and the generic plan then cost the same, and
 * PostgreSQL keeps the generic one (the plan is the same index scan either way).
 */
const hidden = (value: RawBuilder<unknown>) => sql`(SELECT ${value})`;

/** Conditions on the list's rows of the page: tenant, updatedSince, horizon, keyset start. */
function pageWhere(alias: string, q: PageStatement): RawBuilder<unknown> {
  const col = (c: string) => sql.ref(`${alias}.${c}`);
  const parts = [sql`${col('tenant_id')} = ${q.tenantId}`, sql`${col('updated_at')} < ${horizonOf(q)}`];
  if (q.since !== null) parts.push(sql`${col('updated_at')} >= ${ts(q.since)}`);
  if (isWalkStart(q.after)) {
    // The walk's end of the page before, when that is the checkpoint the start found (no item otherwise).
    const before = q.after.page - 1;
    const end = (c: string) => sql`(SELECT ${sql.raw(c)} FROM start WHERE c_page = ${before})`;
    parts.push(sql`(${col('updated_at')}, ${col('id')}) > (${end('c_u')}::timestamptz, ${end('c_id')})`);
  } else if (q.after !== null) parts.push(sql`(${col('updated_at')}, ${col('id')}) > (${hidden(ts(q.after.u))}, ${hidden(sql`${q.after.id}::uuid`)})`);
  return sql.join(parts, sql` AND `);
}

/**
 * The page's rows, numbered. In-order reads (skip 0) are the plain keyset scan of the
 * sync index joined row by row, the query a hand-written client would run. Only the
 * OFFSET fallback takes the keys from the index alone first (an index-only scan that
 * skips entries, not joined rows) and joins the page's rows afterwards.
 */
function pageRows(shape: ListShape, q: PageStatement): RawBuilder<unknown> {
  const a = sql.raw(shape.alias);
  const table = sql.table(shape.table);
  if (q.skip === 0) {
    return sql`SELECT row_number() OVER (ORDER BY ${a}.updated_at, ${a}.id) AS ord, ${a}.updated_at AS u, ${a}.id, ${shape.item} AS item
      FROM ${table} ${a} ${shape.joins}
     WHERE ${pageWhere(shape.alias, q)}
     ORDER BY ${a}.updated_at, ${a}.id
     LIMIT ${sql.lit(rowsToRead(q.limit))}`;
  }
  return sql`SELECT row_number() OVER (ORDER BY k.updated_at, k.id) AS ord, k.updated_at AS u, k.id, ${shape.item} AS item
      FROM (SELECT x.id, x.updated_at FROM ${table} x WHERE ${pageWhere('x', q)}
             ORDER BY x.updated_at, x.id OFFSET ${q.skip} LIMIT ${q.limit + 1}) k
      JOIN ${table} ${a} ON ${a}.id = k.id ${shape.joins}
     ORDER BY k.updated_at, k.id`;
}

/**
 * Rows of the tenant's list stamped at or after `at` (an index-only range count; few at a
 * recent horizon).
 *
 * The range is closed above by 'infinity', which every stamp is below (updated_at is
 * NOT NULL and a clock reading): the same rows, but a range the planner can cost. Open
 * above, with its bound unknown when planned (the page's own horizon is a CTE; any
 * bound in a generic plan), `updated_at >= x` is costed as a third of the table; once
 * the table had grown with row versions no vacuum had yet seen (its visibility map, and
 * pg_class's all-visible count, far behind the table), the index-only scan of a third
 * of the rows lost to a sequential scan of the whole table: the page of 1000 poles took
 * 1–2 s during a fleet's telemetry instead of 10 ms (every pole read to count none).
 * With both bounds, an unknown one among them, PostgreSQL costs the range at 0.5% of
 * the rows, and the index wins however far the visibility map is behind.
 */
function tail(shape: ListShape, tenantId: string, at: string | RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(SELECT count(*) FROM ${sql.table(shape.table)} WHERE tenant_id = ${tenantId} AND updated_at >= ${typeof at === 'string' ? ts(at) : at} AND updated_at <= 'infinity')`;
}

/** Rows stamped in [from, to), at most `cap` of them (null bounds are open). */
function rangeCount(shape: ListShape, tenantId: string, from: string | null, to: string | null, cap?: RawBuilder<number>): RawBuilder<number> {
  const where = [sql`tenant_id = ${tenantId}`];
  if (from !== null) where.push(sql`updated_at >= ${ts(from)}`);
  if (to !== null) where.push(sql`updated_at < ${ts(to)}`);
  const rows = sql`SELECT 1 FROM ${sql.table(shape.table)} WHERE ${sql.join(where, sql` AND `)}`;
  // Capped: in index order, so the count stops early in the sync index rather than in a scan of the table.
  return cap === undefined ? sql<number>`(SELECT count(*) FROM (${rows}) x)` : sql<number>`(SELECT count(*) FROM (${rows} ORDER BY updated_at LIMIT ${cap}) x)`;
}

/**
 * The tenant's row count of the list: the sum of its city_data_count rows (0004,
 * striped into slots by 0009), read inside the page's snapshot.
 */
function rowCount(tenantId: string, resource: CityResource): RawBuilder<number> {
  return sql<number>`(SELECT coalesce(sum(row_count), 0) FROM city_data_count WHERE tenant_id = ${tenantId} AND resource = ${resource})`;
}

const NULL = sql<null>`NULL::bigint`;

/**
 * Items per piece of a page's text. A page of 1000 poles is 340 KB of JSON: as one text
 * it reached Node as one string, which V8 puts in its large-object space (above 128 KB)
 * and only a full collection frees, so serving pages kept the collector busy (30% of
 * the process's busy time in a full sync). Pieces of 64 items (about 22 KB of poles,
 * 29 KB of service orders) are young objects, freed by the cheap collections.
 */
export const ITEMS_PER_PIECE = 64;

/** The "mid" and "low" columns (n: the row-count CTE, m: the mid CTE). */
function matchingCounts(shape: ListShape, q: PageStatement): { mid: RawBuilder<number | null>; low: RawBuilder<number | null> } {
  const m = q.matching;
  if (m.kind === 'none' || q.since === null) return { mid: NULL, low: NULL };
  if (m.kind === 'above') return { mid: rangeCount(shape, q.tenantId, q.since, null), low: NULL };
  // Uncorrelated subqueries run only when their CASE branch is reached: nothing is counted while the cache holds.
  const unless = m.unless;
  const counted = (count: RawBuilder<number>): RawBuilder<number | null> => (unless === null ? count : sql<number | null>`CASE WHEN n.rows - n.tail_cache = ${unless.cacheBelow}::bigint THEN NULL ELSE ${count} END`);
  const low = rangeCount(shape, q.tenantId, null, q.since);
  if (m.side === 'low') return { mid: NULL, low: counted(low) };
  if (m.side === 'mid') return { mid: counted(rangeCount(shape, q.tenantId, q.since, q.horizon)), low: NULL };
  const capped = rangeCount(shape, q.tenantId, q.since, q.horizon, sql<number>`(SELECT rows / 2 + 1 FROM n)`);
  return { mid: counted(capped), low: sql<number | null>`CASE WHEN m.mid > n.rows / 2 THEN ${low} END` };
}

export function pageStatement(resource: CityResource, q: PageStatement) {
  const shape = LIST_SHAPES[resource];
  const m = q.matching;
  if (q.horizon === null && (m.kind !== 'none' || q.rankHorizon !== null || q.since !== null)) {
    throw new Error('a page reads its own horizon only without updatedSince and without a rank to check');
  }
  const walk = isWalkStart(q.after) ? q.after : null;
  if (walk !== null && (q.horizon !== null || q.skip !== 0 || q.since !== null || walk.walk.since !== null || walk.walk.resource !== resource || walk.walk.tenantId !== q.tenantId || walk.page < 2)) {
    throw new Error("a page reads its walk's start only for a page > 1 of a walk of the same list without updatedSince, in order, with its own horizon");
  }
  // What the walk remembers, as readStartStatement reads it, at this statement's horizon and in its snapshot.
  const start = walk ? sql`start AS MATERIALIZED (${readStartStatement(walk.walk, walk.page, walk.target, sql`(SELECT at FROM horizon)`)}), ` : sql``;
  const cacheTail = m.kind === 'count' && m.unless !== null ? tail(shape, q.tenantId, m.unless.cacheHorizon) : NULL;
  const rankTail = q.rankHorizon === null ? NULL : tail(shape, q.tenantId, q.rankHorizon);
  const counts = matchingCounts(shape, q);
  return sql<Partial<ReadStartRow> & {
    items: string | null;
    fetched: number;
    last_u: string | null;
    last_id: string | null;
    rows: number;
    tail_now: number;
    tail_rank: number | null;
    tail_cache: number | null;
    mid: number | null;
    low: number | null;
    h: string | null;
  }>`WITH ${q.horizon === null ? sql`horizon AS MATERIALIZED (SELECT greatest(lumen_visibility_horizon(), ${q.floor ?? null}::timestamptz${walk ? sql`, ${walkHorizonFloor(walk.walk, walk.page)}` : sql``}) AS at), ` : sql``}${start}page AS MATERIALIZED (${pageRows(shape, q)}),
     n AS MATERIALIZED (SELECT ${rowCount(q.tenantId, resource)}::bigint AS rows, ${tail(shape, q.tenantId, horizonOf(q))} AS tail_now,
                               ${rankTail} AS tail_rank, ${cacheTail} AS tail_cache),
     m AS MATERIALIZED (SELECT ${counts.mid} AS mid FROM n)
SELECT p.items,
       (SELECT count(*) FROM page WHERE ord <= ${q.limit + 1}) AS fetched,
       l.u AS last_u, l.id AS last_id,
       n.rows, n.tail_now, n.tail_rank, n.tail_cache, m.mid, ${counts.low} AS low,
       ${walk ? sql`s.*` : sql`${q.horizon === null ? sql`(SELECT ${microsIso('at')} FROM horizon)` : sql`NULL::text`} AS h`}
  FROM n CROSS JOIN m${walk ? sql` CROSS JOIN start s` : sql``}
  LEFT JOIN LATERAL (SELECT to_char(u AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, id
                       FROM page WHERE ord <= ${q.limit} ORDER BY ord DESC LIMIT 1) l ON true
  LEFT JOIN LATERAL (SELECT (ord - 1) / ${sql.lit(ITEMS_PER_PIECE)} AS piece,
                            CASE WHEN (ord - 1) / ${sql.lit(ITEMS_PER_PIECE)} > 0 THEN ',' ELSE '' END || string_agg(item, ',' ORDER BY ord) AS items
                       FROM page WHERE ord <= ${q.limit} GROUP BY 1) p ON true
 ORDER BY p.piece`;
}

export async function readPage(db: Executor, resource: CityResource, q: PageStatement): Promise<PageResult> {
  const { rows } = await pageStatement(resource, q).execute(db);
  // One row per piece of items (one row with no items when the page is empty); the counts repeat on each.
  const r = rows[0]!;
  const items: string[] = [];
  for (const row of rows) if (row.items !== null) items.push(row.items);
  return {
    items,
    fetched: Number(r.fetched),
    last: r.last_u !== null && r.last_id !== null ? { u: r.last_u, id: r.last_id } : null,
    rows: Number(r.rows),
    tailNow: Number(r.tail_now),
    tailRank: r.tail_rank === null ? null : Number(r.tail_rank),
    tailCache: r.tail_cache === null ? null : Number(r.tail_cache),
    mid: r.mid === null ? null : Number(r.mid),
    low: r.low === null ? null : Number(r.low),
    horizon: r.h,
    start: isWalkStart(q.after) ? readStartOf(r as ReadStartRow) : null,
  };
}
