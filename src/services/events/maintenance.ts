import { sql, type RawBuilder } from 'kysely';
import type { RuntimeDeps } from '../deps.js';
import { overdueDeliveries, unblockOrphans } from '../../db/repositories/webhook-delivery.repository.js';
import { wakeDeliveries } from './dispatch.js';

/** A delivery due longer than this without an attempt has been missed (normal pick-up takes milliseconds). */
const OVERDUE_AFTER_MS = 30_000;
const SWEEP_BATCH = 500;
const CLEANUP_BATCH = 5000;

/**
 * Restarts deliveries that nothing would start otherwise, and returns how many: ones
 * left blocked although no earlier delivery of their order is open any more (written
 * while the settle that ended the one ahead of them was running), and ones due for a
 * while without an attempt (no delivery worker was running, or none was woken), for
 * which every serving process's delivery worker is woken.
 */
export async function sweepStrandedDeliveries(deps: RuntimeDeps): Promise<number> {
  const unblocked = await unblockOrphans(deps.db);
  const overdue = await overdueDeliveries(deps.db, new Date(Date.now() - OVERDUE_AFTER_MS), SWEEP_BATCH);
  const count = unblocked.length + overdue.length;
  if (count === 0) return 0;
  await wakeDeliveries(deps.db);
  deps.log.info({ unblocked: unblocked.length, overdue: overdue.length }, 'stranded webhook deliveries started again');
  return count;
}

/**
 * Removes events and test events older than the retention (LUMEN_EVENT_RETENTION_DAYS,
 * at least 30), with their deliveries and attempts, in batches so no transaction grows
 * large. Returns how many of both were removed.
 */
export async function deleteExpiredEvents(deps: RuntimeDeps): Promise<number> {
  const events = await deleteExpired(deps, sql`event`);
  const tests = await deleteExpired(deps, sql`test_event`);
  // Undoable actions long settled (released or undone) say nothing more: their events
  // are in the outbox or were never sent, the audit log keeps the rest.
  await sql`DELETE FROM undoable_action WHERE settled IS NOT NULL AND settled_at < now() - ${deps.config.eventRetentionDays} * interval '1 day'`.execute(deps.db);
  if (events + tests > 0) deps.log.info({ count: events, testEvents: tests, retentionDays: deps.config.eventRetentionDays }, 'expired events removed');
  return events + tests;
}

async function deleteExpired(deps: RuntimeDeps, table: RawBuilder<unknown>): Promise<number> {
  let total = 0;
  for (;;) {
    const res = await sql<{ id: string }>`
      DELETE FROM ${table} WHERE id IN (
        SELECT id FROM ${table}
        WHERE created_at < now() - ${deps.config.eventRetentionDays} * interval '1 day'
        LIMIT ${CLEANUP_BATCH}
      ) RETURNING id`.execute(deps.db);
    total += res.rows.length;
    if (res.rows.length < CLEANUP_BATCH) return total;
  }
}
