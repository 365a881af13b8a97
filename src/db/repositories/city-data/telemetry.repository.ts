import { sql } from 'kysely';
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
 */
export async function applyDeviceStates(tx: Tx, tenantId: string, states: readonly DeviceState[]): Promise<{ known: Set<string>; applied: Set<string> }> {
  if (states.length === 0) return { known: new Set(), applied: new Set() };
  const identifiers = states.map((s) => s.identifier);
  const locked = await tx
    .selectFrom('telegestor')
    .select(['id', 'identifier'])
    .where('tenant_id', '=', tenantId)
    .where('identifier', '=', sql<string>`ANY(${identifiers}::text[])`)
    .orderBy('id')
    .forUpdate()
    .execute();
  const known = new Set(locked.map((r) => r.identifier));
  const { rows } = await sql<{ identifier: string }>`
    UPDATE telegestor t
       SET online = r.online, relay_on = r.relay_on, last_communication_at = r.reported_at,
           offline_since = CASE WHEN r.online THEN NULL ELSE coalesce(t.offline_since, r.reported_at) END,
           relay_off_since = CASE WHEN r.relay_on IS FALSE THEN coalesce(t.relay_off_since, r.reported_at)
                                  WHEN r.relay_on IS TRUE THEN NULL ELSE t.relay_off_since END
      FROM unnest(${identifiers}::text[], ${states.map((s) => s.online)}::boolean[], ${states.map((s) => s.relayOn)}::boolean[], ${states.map((s) => s.reportedAt)}::timestamptz[])
           AS r(identifier, online, relay_on, reported_at)
     WHERE t.tenant_id = ${tenantId}
       AND t.identifier = r.identifier
       AND (t.last_communication_at IS NULL OR r.reported_at > t.last_communication_at)
    RETURNING t.identifier`.execute(tx);
  return { known, applied: new Set(rows.map((r) => r.identifier)) };
}
