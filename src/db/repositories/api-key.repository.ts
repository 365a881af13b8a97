import { sql } from 'kysely';
import type { Executor, Tx } from '../database.js';
import type { Scope } from '../tables/foundation.js';

export interface ActiveKey {
  key_hash: Buffer;
  external_system_id: string;
  code: string;
  tenant_id: string;
  scopes: Scope[];
  enabled: boolean;
  ibge_code: string | null;
  rate_limit_per_minute: number | null;
}

export async function insertApiKey(db: Executor, row: { external_system_id: string; key_id: string; key_prefix: string; key_hash: Buffer; expires_at?: Date | null }): Promise<void> {
  await db.insertInto('api_key').values({ ...row, expires_at: row.expires_at ?? null, revoked_at: null }).execute();
}

/** Revokes every live key of a partner (rotation invalidates the previous key at once). */
export async function revokeApiKeys(tx: Tx, externalSystemId: string): Promise<number> {
  const res = await tx.updateTable('api_key').set({ revoked_at: new Date() }).where('external_system_id', '=', externalSystemId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * The live key with this id, with its partner and tenant. Read on every request:
 * no cache, so a rotation or a disable is effective on every instance at once.
 */
export async function findActiveKey(db: Executor, keyId: string): Promise<ActiveKey | undefined> {
  return db
    .selectFrom('api_key as k')
    .innerJoin('external_system as es', 'es.id', 'k.external_system_id')
    .innerJoin('tenant as t', 't.id', 'es.tenant_id')
    .select(['k.key_hash', 'k.external_system_id', 'es.code', 'es.tenant_id', 'es.scopes', 'es.enabled', 't.ibge_code', 'es.rate_limit_per_minute'])
    .where('k.key_id', '=', keyId)
    .where('k.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst();
}

export async function findLiveKeyPrefix(db: Executor, externalSystemId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('api_key')
    .select('key_prefix')
    .where('external_system_id', '=', externalSystemId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return row?.key_prefix;
}
