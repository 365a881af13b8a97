import { sql } from 'kysely';
import type { AppDeps } from '../app-deps.js';
import { strandedDeliveries } from '../db/repositories/webhook-delivery.repository.js';
import { enqueueDelivery } from './events-dispatch.js';

/** A delivery due longer than this without an attempt lost its job (normal pick-up takes milliseconds). */
const STRANDED_AFTER_MS = 30_000;
const SWEEP_BATCH = 500;
const CLEANUP_BATCH = 5000;

/**
 * Enqueues deliveries that are due, unleased and first of their order but have not
 * been attempted for a while: their job was lost (an instance died mid-attempt and
 * its lease expired, a job expired, the writer's database handle carried no queue).
 * Returns how many were enqueued.
 */
export async function sweepStrandedDeliveries(deps: AppDeps): Promise<number> {
  const stranded = await strandedDeliveries(deps.db, new Date(Date.now() - STRANDED_AFTER_MS), SWEEP_BATCH);
  if (stranded.length === 0) return 0;
  await deps.db.transaction().execute(async (tx) => {
    for (const d of stranded) await enqueueDelivery(tx, d.id);
  });
  deps.log.info({ count: stranded.length }, 'stranded webhook deliveries enqueued again');
  return stranded.length;
}

/**
 * Removes events older than the retention (LUMEN_EVENT_RETENTION_DAYS, at least 30),
 * with their deliveries and attempts, in batches so no transaction grows large.
 */
export async function deleteExpiredEvents(deps: AppDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const res = await sql<{ id: string }>`
      DELETE FROM event WHERE id IN (
        SELECT id FROM event
        WHERE created_at < now() - ${deps.config.eventRetentionDays} * interval '1 day'
        LIMIT ${CLEANUP_BATCH}
      ) RETURNING id`.execute(deps.db);
    total += res.rows.length;
    if (res.rows.length < CLEANUP_BATCH) break;
  }
  if (total > 0) deps.log.info({ count: total, retentionDays: deps.config.eventRetentionDays }, 'expired events removed');
  return total;
}
