import { sql } from 'kysely';
import type { Executor } from '../database.js';

/** A pole whose lamp has been reported out for longer than its tenant allows, with no open alert. */
export interface LampOutCandidate {
  telegestor_identifier: string;
  pole_id: string;
  pole_code: string;
  address: string | null;
  neighborhood: string | null;
  latitude: number;
  longitude: number;
  /** offline: the device stopped communicating; relay-off: its relay reported off at night. */
  cause: 'offline' | 'relay-off';
  /** Since when it counts as out (for relay-off, not before the night began). */
  out_since: Date;
}

/**
 * The lamp-out rule of migration 0015 for one tenant at `now`: a device reporting
 * itself offline for at least `lamp_out_after_minutes`, or its relay off for that long
 * within the current local night (`night_starts`..`night_ends` in the tenant's time
 * zone, which may wrap midnight), on an active pole that has no open alert yet.
 * Nothing when the tenant has no threshold.
 */
export async function lampOutCandidates(db: Executor, tenantId: string, now: Date): Promise<LampOutCandidate[]> {
  const { rows } = await sql<LampOutCandidate>`
    WITH t AS (
      SELECT id, make_interval(mins => lamp_out_after_minutes) AS after, night_starts, night_ends, timezone,
             (${now}::timestamptz AT TIME ZONE timezone) AS local
        FROM tenant WHERE id = ${tenantId} AND lamp_out_after_minutes IS NOT NULL
    ), w AS (
      SELECT t.*,
             CASE WHEN night_starts > night_ends THEN local::time >= night_starts OR local::time < night_ends
                  ELSE local::time >= night_starts AND local::time < night_ends END AS in_night,
             ((CASE WHEN local::time >= night_starts THEN local::date ELSE local::date - 1 END) + night_starts) AT TIME ZONE timezone AS night_began
        FROM t
    )
    SELECT g.identifier AS telegestor_identifier, p.id AS pole_id, p.code AS pole_code, p.address, p.neighborhood, p.latitude, p.longitude,
           x.cause, x.out_since
      FROM w
      JOIN telegestor g ON g.tenant_id = w.id AND g.pole_id IS NOT NULL
      JOIN pole p ON p.id = g.pole_id AND p.active
     CROSS JOIN LATERAL (
       SELECT CASE WHEN g.offline_since <= ${now}::timestamptz - w.after THEN 'offline' ELSE 'relay-off' END AS cause,
              CASE WHEN g.offline_since <= ${now}::timestamptz - w.after THEN g.offline_since ELSE greatest(g.relay_off_since, w.night_began) END AS out_since
     ) x
     WHERE (g.offline_since <= ${now}::timestamptz - w.after
            OR (w.in_night AND greatest(g.relay_off_since, w.night_began) <= ${now}::timestamptz - w.after))
       -- Not while the pole's alert is open, and never twice for the same outage.
       AND NOT EXISTS (SELECT 1 FROM telemetry_lamp_out o JOIN alert a ON a.id = o.alert_id
                        WHERE o.pole_id = p.id AND (o.out_since = x.out_since OR a.status NOT IN ('Resolved', 'Cancelled')))
     ORDER BY p.code`.execute(db);
  return rows;
}

/** Tenants with a lamp-out threshold. */
export async function tenantsWatchingLamps(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('tenant').select('id').where('lamp_out_after_minutes', 'is not', null).orderBy('id').execute();
  return rows.map((r) => r.id);
}

/**
 * Records the alert raised for a pole's outage, replacing the record of a closed alert
 * of an earlier outage; false when the pole has a record of an open alert or of this
 * outage already (another pass got there first).
 */
export async function recordLampOut(db: Executor, row: { pole_id: string; tenant_id: string; alert_id: string; out_since: Date }): Promise<boolean> {
  const { rows } = await sql<{ pole_id: string }>`
    INSERT INTO telemetry_lamp_out (pole_id, tenant_id, alert_id, out_since)
    VALUES (${row.pole_id}, ${row.tenant_id}, ${row.alert_id}, ${row.out_since})
    ON CONFLICT (pole_id) DO UPDATE
       SET alert_id = EXCLUDED.alert_id, out_since = EXCLUDED.out_since, opened_at = now(), recovered_noted_at = NULL
     WHERE telemetry_lamp_out.out_since <> EXCLUDED.out_since
       AND EXISTS (SELECT 1 FROM alert a WHERE a.id = telemetry_lamp_out.alert_id AND a.status IN ('Resolved', 'Cancelled'))
    RETURNING pole_id`.execute(db);
  return rows.length > 0;
}

/** Open lamp-out alerts still Pending whose device now reports the lamp good (online, relay not off), not yet noted. */
export async function recoveredLampOuts(db: Executor, tenantId: string): Promise<{ pole_id: string; alert_id: string; identifier: string; reported_at: Date }[]> {
  const { rows } = await sql<{ pole_id: string; alert_id: string; identifier: string; reported_at: Date }>`
    SELECT o.pole_id, o.alert_id, g.identifier, g.last_communication_at AS reported_at
      FROM telemetry_lamp_out o
      JOIN alert a ON a.id = o.alert_id AND a.status = 'Pending'
      JOIN telegestor g ON g.pole_id = o.pole_id AND g.tenant_id = o.tenant_id
     WHERE o.tenant_id = ${tenantId} AND o.recovered_noted_at IS NULL
       AND g.online AND g.relay_off_since IS NULL AND g.last_communication_at IS NOT NULL`.execute(db);
  return rows;
}

/** Marks a recovery as noted; false when another run noted it first. */
export async function markRecoveryNoted(db: Executor, poleId: string, alertId: string): Promise<boolean> {
  const res = await db
    .updateTable('telemetry_lamp_out')
    .set({ recovered_noted_at: new Date() })
    .where('pole_id', '=', poleId)
    .where('alert_id', '=', alertId)
    .where('recovered_noted_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
