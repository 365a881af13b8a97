import type { PageResult } from '../../db/repositories/city-data/page.repository.js';
import type { Position } from '../../db/repositories/city-data/position.repository.js';
import type { Epoch, Rank, ReadStart } from '../../db/repositories/city-data/read-walk.repository.js';
import { holds, pageEpoch } from './total.js';

/**
 * Where a numbered page starts (4.3 `page`), and what is known of its rank.
 *
 * Page N+1 of a walk continues right after the last item of the walk's page N (a
 * keyset: a change during the walk cannot shift it). A page requested out of order
 * has no such anchor and is placed by counting items: from the walk's nearest
 * earlier page, from a position whose rank (place in the current order, see
 * city-data/total.ts) is known, or from the start, whichever counts fewest. A rank
 * comes from a read that started at a known rank: the start of the list, or a ranked
 * position checked in the same snapshot. The pages of a walk that follow it inherit
 * it unchecked (checked when a page out of order uses them), so a walk of the whole
 * list ranks every page end and a later page N requested directly (by any partner of
 * the tenant with the same filter, whatever its page size) starts next to it.
 */

/** The rank of a page's start: known now, inherited (true while its epoch holds), or to check in the page's snapshot. */
export type BaseRank =
  | { readonly kind: 'exact'; readonly rank: number }
  | { readonly kind: 'inherited'; readonly rank: number; readonly epoch: Epoch }
  | { readonly kind: 'check'; readonly rank: number; readonly epoch: Epoch };

export interface Placement {
  /** Exclusive keyset start; null = the start of the list. */
  readonly after: Position | null;
  /** Items to count (skip) after it. */
  readonly skip: number;
  readonly base: BaseRank | null;
}

const epochOf = (r: Rank): Epoch => ({ horizon: r.horizon, below: r.below });

/** Where page `page` starts; `useRanked` false after its ranked position failed its check. */
export function placePage(page: number, pageSize: number, start: ReadStart, useRanked = true): Placement {
  const fromStart: Placement = { after: null, skip: (page - 1) * pageSize, base: { kind: 'exact', rank: 0 } };
  if (page === 1) return fromStart;
  const options: Placement[] = [];
  const cp = start.checkpoint;
  if (cp) {
    const base: BaseRank | null = cp.rank ? { kind: 'inherited', rank: cp.rank.rank, epoch: epochOf(cp.rank) } : null;
    const walked: Placement = { after: cp.position, skip: (page - 1 - cp.page) * pageSize, base };
    if (cp.page === page - 1) return walked; // continuesWalk's case when the position is known
    options.push(walked);
  }
  const ranked = start.ranked;
  // A rank is checked by its epoch only in a snapshot whose horizon is not below the
  // epoch's: no row can then have joined the epoch's set between the two snapshots,
  // whichever came first (a replica's snapshot may be older than the one that ranked).
  if (useRanked && ranked && ranked.rank.horizon <= start.horizon) {
    options.push({ after: ranked.position, skip: fromStart.skip - ranked.rank.rank, base: { kind: 'check', rank: ranked.rank.rank, epoch: epochOf(ranked.rank) } });
  }
  options.push(fromStart);
  // Fewest items counted; on a tie the earlier option (the walk's own page first).
  return options.reduce((best, o) => (o.skip < best.skip ? o : best));
}

/**
 * True when the walk remembers where the page before ended: placePage then starts the
 * page right after that position, as the page statement's own continuation (its
 * `after`) reads it, so that statement's rows are the page.
 */
export function continuesWalk(page: number, start: ReadStart): boolean {
  const cp = start.checkpoint;
  return cp !== null && cp.page === page - 1 && cp.position !== null;
}

/** False when the page started from a ranked position that no longer holds: read it again placed otherwise. */
export function placementHeld(p: Placement, page: PageResult): boolean {
  return p.base?.kind !== 'check' || holds(p.base.epoch, page.rows, page.tailRank);
}

/** The epoch whose tail the page statement must count to check its start, or null. */
export function rankToCheck(p: Placement): string | null {
  return p.base?.kind === 'check' ? p.base.epoch.horizon : null;
}

/**
 * The rank of the page's end (its last item, or its start when empty), when known.
 * `inherit` false (a page read on a replica): an unchecked rank is not carried on,
 * since this snapshot may be older than the one its epoch was taken in, and rows that
 * left the epoch's set in between would be counted here without a later check
 * noticing.
 */
export function endRank(p: Placement, horizon: string, page: PageResult, limit: number, inherit = true): Rank | null {
  const base = p.base;
  if (base === null) return null;
  const position = page.last ?? (p.skip === 0 ? p.after : null);
  if (position === null) return null;
  const rank = base.rank + (page.last === null ? 0 : p.skip + Math.min(page.fetched, limit));
  // The rows up to the position keep their rank while an epoch whose horizon is above it holds.
  if (base.kind === 'inherited') return inherit && position.u < base.epoch.horizon ? { rank, ...base.epoch } : null;
  if (base.kind === 'check' && position.u < base.epoch.horizon) return { rank, ...base.epoch };
  // Known exactly in this snapshot: this snapshot's epoch (every served item is below its horizon).
  return { rank, ...pageEpoch(horizon, page) };
}
