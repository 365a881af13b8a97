import type { MatchingCount, PageResult } from '../../db/repositories/city-data/page.repository.js';
import type { Epoch, TotalCache } from '../../db/repositories/city-data/read-walk.repository.js';

/**
 * `total` of a list page, and the rank of a page position, exact without counting
 * the list on every page.
 *
 * The argument. Let H be a visibility horizon read by one statement and S the
 * snapshot of a later statement. A row version committed after S comes from a
 * transaction that was running when H was read or began later, and every stamp it
 * writes (lumen_write_stamp(), taken after its transaction id) is >= H. The
 * tenant's rows stamped below H at S can therefore afterwards only leave that set (an
 * update restamps a row >= H, a delete removes it), never join it. Counted at S as
 * `below` = rows - tail(H) (the trigger-kept row count and the rows stamped >= H,
 * both in S's snapshot), that number identifies the set: at a later snapshot,
 * rows - tail(H) = below holds exactly when no row of the set left since S, and then
 * it held at every snapshot between (the set only shrinks). Such an epoch (H, below)
 * keeps two facts measured at S (or at any snapshot after S while it holds) true:
 *
 * - total of an updatedSince <= H: with matchingBelow = the items stamped in
 *   [updatedSince, H) at S, total = matchingBelow + tail(H) (every row >= H matches).
 * - rank of a position P < H (the items of the filter up to P): the same rows.
 *
 * A fact checked at S' with a newer horizon H' (read before S') carries over to it:
 * below' = rows - tail(H'), matchingBelow' = matchingBelow + tail(H) - tail(H'), so
 * the rows stamped >= the horizon, counted at every read, stay few. A failed check
 * (a row below H was updated or deleted) means: count the total again, forget the
 * rank. Caching only the count and the deletion counter would not do: a row updated
 * from below updatedSince joins the filter without changing either.
 *
 * Like the horizon itself (0016_visibility_horizon.sql), this holds for every writer,
 * Lumen or not: the horizon comes from PostgreSQL's snapshot, not from connection names.
 */

/**
 * What the page statement counts for `total`. Counting the filter's items below the
 * horizon ("mid") is cheap for a recent updatedSince, counting the rows below
 * updatedSince ("low") for an old one: total = rows below the horizon - low + tail.
 * A cache says which side is smaller; without one, mid is counted up to half the
 * rows and low when mid reaches that.
 */
export function matchingPlan(since: string | null, horizon: string, cache: TotalCache | null): MatchingCount {
  if (since === null) return { kind: 'none' };
  // Every matching item is at or above the horizon: few, counted directly.
  if (since > horizon) return { kind: 'above' };
  if (cache !== null && since <= cache.horizon && cache.horizon <= horizon) {
    const side = cache.matchingBelow <= cache.below - cache.matchingBelow ? 'mid' : 'low';
    return { kind: 'count', side, unless: { cacheHorizon: cache.horizon, cacheBelow: cache.below } };
  }
  return { kind: 'count', side: 'mid-then-low', unless: null };
}

/** Whether `epoch` still holds in the snapshot that counted `rows` and `tail` (rows stamped >= its horizon). */
export function holds(epoch: Epoch, rows: number, tail: number | null): boolean {
  return tail !== null && rows - tail === epoch.below;
}

/** The epoch of the page statement's own snapshot, at the horizon read before it. */
export function pageEpoch(horizon: string, page: PageResult): Epoch {
  return { horizon, below: page.rows - page.tailNow };
}

/** The page's `total`, and the cache to keep for the filter (carried over to this page's horizon). */
export function pageTotal(plan: MatchingCount, horizon: string, cache: TotalCache | null, page: PageResult): { total: number; cache: TotalCache | null } {
  if (plan.kind === 'none') return { total: page.rows, cache: null };
  if (plan.kind === 'above') return { total: page.mid!, cache: null };
  const epoch = pageEpoch(horizon, page);
  // Counted in this snapshot: the items in [since, horizon), directly or as the rows below the horizon minus those below since.
  const counted = page.low !== null ? epoch.below - page.low : page.mid;
  if (counted !== null) return { total: counted + page.tailNow, cache: { ...epoch, matchingBelow: counted } };
  // The cache held: its rows stamped in [its horizon, this horizon) move below.
  const total = cache!.matchingBelow + page.tailCache!;
  return { total, cache: { ...epoch, matchingBelow: total - page.tailNow } };
}
