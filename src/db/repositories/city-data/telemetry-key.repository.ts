import type { Selectable } from 'kysely';
import type { Executor } from '../../database.js';
import type { TelemetryKeyTable } from '../../tables/city-data.js';

export type TelemetryKeyRow = Selectable<TelemetryKeyTable>;

export async function insertTelemetryKey(db: Executor, row: { tenant_id: string; name: string; key_id: string; key_prefix: string; key_hash: Buffer }): Promise<TelemetryKeyRow> {
  return db.insertInto('telemetry_key').values({ ...row, revoked_at: null }).returningAll().executeTakeFirstOrThrow();
}

/** The live key with this id (read on every request: a revocation is effective at once). */
export async function findLiveTelemetryKey(db: Executor, keyId: string): Promise<TelemetryKeyRow | undefined> {
  return db.selectFrom('telemetry_key').selectAll().where('key_id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
}

export async function listTelemetryKeys(db: Executor, tenantId: string): Promise<TelemetryKeyRow[]> {
  return db.selectFrom('telemetry_key').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').execute();
}

/** Revokes by prefix (lmn_tel_XXXXXXXX) or row id; returns the revoked row. */
export async function revokeTelemetryKey(db: Executor, prefixOrId: string): Promise<TelemetryKeyRow | undefined> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(prefixOrId);
  return db
    .updateTable('telemetry_key')
    .set({ revoked_at: new Date() })
    .where(isUuid ? 'id' : 'key_prefix', '=', prefixOrId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}
