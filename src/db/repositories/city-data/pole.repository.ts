import { sql, type RawBuilder } from 'kysely';
import type { Tx } from '../../database.js';

/**
 * Pole writes of one tenant: a bulk import takes this lock exclusively, telemetry
 * shared. Telemetry batches then never interleave with an import (which would
 * deadlock on pole and telegestor rows taken in different orders) and never wait
 * row by row behind it.
 */
const lockKey = (tenantId: string) => sql<string>`hashtextextended(${`lumen:pole-writes:${tenantId}`}, 0)`;

export async function lockPoleWritesExclusive(tx: Tx, tenantId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${lockKey(tenantId)})`.execute(tx);
}

/**
 * The shared lock as an SQL expression, true once it is held, for a statement that takes
 * it with its own work: `try` is false at once while an import of the tenant runs,
 * `wait` waits for the import to end.
 */
export function poleWritesSharedLock(tenantId: string, mode: 'try' | 'wait'): RawBuilder<boolean> {
  return mode === 'try'
    ? sql<boolean>`pg_try_advisory_xact_lock_shared(${lockKey(tenantId)})`
    : sql<boolean>`(SELECT true FROM (SELECT pg_advisory_xact_lock_shared(${lockKey(tenantId)})) waited)`;
}
