import { sql } from 'kysely';
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

export async function lockPoleWritesShared(tx: Tx, tenantId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock_shared(${lockKey(tenantId)})`.execute(tx);
}

/** false while an import of this tenant is running. */
export async function tryLockPoleWritesShared(tx: Tx, tenantId: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock_shared(${lockKey(tenantId)}) AS ok`.execute(tx);
  return rows[0]!.ok;
}
