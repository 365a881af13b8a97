import { deleteUnusedReads } from '../../db/repositories/city-data/read-walk.repository.js';
import type { ServiceDeps } from '../deps.js';

/**
 * What numbered page reads leave behind (walks, their checkpoints, cached totals) and
 * nobody used for a day, removed. A new row already evicts the least recently used
 * past the bounds (100 walks per partner, 200 totals per tenant); this removes what is
 * merely old. Only a cache: a later read that needed it counts again.
 */
export async function forgetUnusedReads(deps: ServiceDeps): Promise<{ walks: number; totals: number }> {
  const removed = await deleteUnusedReads(deps.db);
  if (removed.walks > 0 || removed.totals > 0) deps.log.info(removed, 'unused page walks and cached totals removed');
  return removed;
}
