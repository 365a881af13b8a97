import type { Executor } from '../db/database.js';
import { countSince, readCounter } from '../db/repositories/city-data.repository.js';
import type { TotalCache } from '../db/repositories/city-read-walk.repository.js';
import type { CityResource } from '../db/tables/city-data.js';

/**
 * `total` of a list page, exact, without counting the set on every page.
 *
 * - No updatedSince: the tenant's row count kept by triggers (one row read).
 * - With updatedSince: counted once per walk (an index-only range count) together
 *   with the tenant's row and deletion counters of the same snapshot, and the
 *   visibility horizon H read before it. Later pages add the rows inserted since:
 *   total = matching + (rows now - rows then). That is exact because every write
 *   committed after the count comes from a transaction that started at or after H
 *   (older ones were still running when H was read, and H is the oldest of them), so
 *   it stamps >= H >= updatedSince: an inserted row matches, an updated row keeps
 *   matching. A deletion since the count, or an updatedSince above H, forces a recount.
 */
export async function exactTotal(
  db: Executor,
  tenantId: string,
  resource: CityResource,
  since: string | null,
  horizon: string,
  cache: TotalCache | null,
): Promise<{ total: number; cache: TotalCache | null; counted: boolean }> {
  if (since === null) {
    const counter = await readCounter(db, tenantId, resource);
    return { total: counter.rows, cache: null, counted: false };
  }
  if (cache && since <= cache.horizon) {
    const counter = await readCounter(db, tenantId, resource);
    if (counter.deleted === cache.deleted) return { total: cache.matching + counter.rows - cache.rows, cache, counted: false };
  }
  const fresh = await countSince(db, tenantId, resource, since);
  return { total: fresh.matching, cache: { matching: fresh.matching, rows: fresh.rows, deleted: fresh.deleted, horizon }, counted: true };
}
