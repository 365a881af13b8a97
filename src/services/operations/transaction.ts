import type { Tx } from '../../db/database.js';
import type { ServiceDeps } from '../deps.js';

const RETRYABLE = new Set(['40P01', '40001']); // deadlock_detected, serialization_failure
const ATTEMPTS = 3;

/**
 * An operator action's transaction. Operator actions lock orders before alerts; a
 * writer elsewhere that locks in the other order (a background job filling an order's
 * coordinates after its alert's) can still meet one in a deadlock, which Postgres
 * breaks by aborting one side. The aborted action changed nothing, so it is run
 * again from the start (it re-reads and re-checks everything), up to 3 times.
 */
export async function operatorTransaction<T>(deps: ServiceDeps, fn: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.db.transaction().execute(fn);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (!code || !RETRYABLE.has(code) || attempt >= ATTEMPTS) throw err;
      deps.log.warn({ code, attempt }, 'operator action hit a lock conflict; running it again');
    }
  }
}
