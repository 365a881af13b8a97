import { sql, type RawBuilder } from 'kysely';
import type { Tx } from '../../database.js';

export interface DeviceState {
  readonly identifier: string;
  readonly online: boolean;
  readonly relayOn: boolean | null;
  /** ISO instant of the report. */
  readonly reportedAt: string;
}

/**
 * Applies the newest report of each device, under row locks taken in id order (two
 * batches touching the same devices queue instead of deadlocking). A report not
 * newer than the stored one changes nothing: state never moves backwards. The
 * telegestor triggers stamp each changed device's pole in this transaction (N5).
 * Returns the identifiers that exist in the tenant and those whose state was applied.
 * With `importLock` (poleWritesSharedLock) the same statement takes the import lock
 * first; `locked` is false when it was not held, and then nothing was read or written.
 */
export async function applyDeviceStates(
  tx: Tx,
  tenantId: string,
  states: readonly DeviceState[],
  importLock: RawBuilder<boolean> | null = null,
): Promise<{ locked: boolean; known: Set<string>; applied: Set<string> }> {
  const identifiers = states.map((s) => s.identifier);
  // The import lock (when asked for) in the statement that locks the device rows: one
  // round trip fewer per batch. The rows are only read, and locked, once it is held.
  const { rows: locked } = await sql<{ ok: boolean; id: string | null; identifier: string | null }>`
    WITH l AS MATERIALIZED (SELECT ${importLock ?? sql<boolean>`true`} AS ok)
    SELECT l.ok, t.id, t.identifier
      FROM l LEFT JOIN LATERAL (
        SELECT id, identifier FROM telegestor
         WHERE l.ok AND tenant_id = ${tenantId} AND identifier = ANY(${identifiers}::text[])
         ORDER BY id
           FOR UPDATE) t ON true`.execute(tx);
  if (!locked[0]?.ok) return { locked: false, known: new Set(), applied: new Set() };
  if (states.length === 0) return { locked: true, known: new Set(), applied: new Set() };
  const known = new Set(locked.flatMap((r) => (r.identifier === null ? [] : [r.identifier])));
  // `was` is the row as it stood before this statement: a report that changes the
  // device's state (or is its first) is also kept in telegestor_state_change (0089).
  const { rows } = await sql<{ identifier: string }>`
    WITH applied AS (
      UPDATE telegestor t
         SET online = r.online, relay_on = r.relay_on, last_communication_at = r.reported_at,
             offline_since = CASE WHEN r.online THEN NULL ELSE coalesce(t.offline_since, r.reported_at) END,
             relay_off_since = CASE WHEN r.relay_on IS FALSE THEN coalesce(t.relay_off_since, r.reported_at)
                                    WHEN r.relay_on IS TRUE THEN NULL ELSE t.relay_off_since END
        FROM unnest(${identifiers}::text[], ${states.map((s) => s.online)}::boolean[], ${states.map((s) => s.relayOn)}::boolean[], ${states.map((s) => s.reportedAt)}::timestamptz[])
             AS r(identifier, online, relay_on, reported_at),
             telegestor was
       WHERE t.tenant_id = ${tenantId}
         AND t.identifier = r.identifier
         AND was.id = t.id
         AND (t.last_communication_at IS NULL OR r.reported_at > t.last_communication_at)
      RETURNING t.id, t.identifier, r.online, r.relay_on, r.reported_at,
                was.online AS was_online, was.relay_on AS was_relay_on, was.last_communication_at AS was_at
    ), changes AS (
      INSERT INTO telegestor_state_change (tenant_id, telegestor_id, online, relay_on, reported_at)
      SELECT ${tenantId}, id, online, relay_on, reported_at FROM applied
       WHERE was_at IS NULL OR was_online IS DISTINCT FROM online OR was_relay_on IS DISTINCT FROM relay_on
    )
    SELECT identifier FROM applied`.execute(tx);
  return { locked: true, known, applied: new Set(rows.map((r) => r.identifier)) };
}
