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

/** findActiveKey with the key's expiry and prefix: what the in-process key cache keeps (src/http/partner-key-cache.ts). */
export async function findActiveKeyForCache(db: Executor, keyId: string): Promise<(ActiveKey & { expires_at: Date | null; key_prefix: string }) | undefined> {
  return db
    .selectFrom('api_key as k')
    .innerJoin('external_system as es', 'es.id', 'k.external_system_id')
    .innerJoin('tenant as t', 't.id', 'es.tenant_id')
    .select(['k.key_hash', 'k.external_system_id', 'es.code', 'es.tenant_id', 'es.scopes', 'es.enabled', 't.ibge_code', 'es.rate_limit_per_minute', 'k.expires_at', 'k.key_prefix'])
    .where('k.key_id', '=', keyId)
    .where('k.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst();
}

/**
 * Adds counted requests to their rate-limit windows in one statement (the in-process
 * counters' reconciliation); returns each window's total across every instance.
 */
export async function addRateLimitCounts(db: Executor, rows: readonly { subject: string; window: number; count: number }[]): Promise<{ subject: string; window_start: number; count: number }[]> {
  const { rows: out } = await sql<{ subject: string; window_start: number; count: number }>`
    INSERT INTO rate_limit_window (subject, window_start, count)
    SELECT * FROM unnest(${rows.map((r) => r.subject)}::text[], ${rows.map((r) => r.window)}::bigint[], ${rows.map((r) => r.count)}::int[])
    ON CONFLICT (subject, window_start) DO UPDATE SET count = rate_limit_window.count + EXCLUDED.count
    RETURNING subject, window_start, count`.execute(db);
  return out;
}

export interface CountedKey extends ActiveKey {
  /** The request's place in its partner's rate-limit window; null when it was not counted (disabled partner, scope missing). */
  window_count: number | null;
  /** When this key stops working (a rotation's overlap, a sandbox key); null: until rotated. */
  expires_at: Date | null;
  /** The key's readable prefix. */
  key_prefix: string;
}

/**
 * findActiveKey and the rate-limit count of the request in one statement (one round
 * trip and one statement planned per request instead of two). The key is matched by
 * its id and its SHA-256 in the statement, so only a presented key that is right
 * counts against its partner's quota: a wrong secret for a known id finds no row and
 * counts nothing. (Comparing the digests in SQL is not constant-time; what it could
 * leak is about a digest, which gives no way to a key that hashes to it.) A request of
 * a disabled partner, or without any of `anyOfScopes` (empty: any key), is not
 * counted, as when the limit was checked after those refusals.
 */
export async function findActiveKeyCounted(db: Executor, keyId: string, keyHash: Buffer, count: { window: number; anyOfScopes: readonly string[] }): Promise<CountedKey | undefined> {
  const { rows } = await sql<CountedKey>`WITH k AS (
      SELECT k.key_hash, k.external_system_id, es.code, es.tenant_id, es.scopes, es.enabled, t.ibge_code, es.rate_limit_per_minute, k.expires_at, k.key_prefix
        FROM api_key k JOIN external_system es ON es.id = k.external_system_id JOIN tenant t ON t.id = es.tenant_id
       WHERE k.key_id = ${keyId} AND k.key_hash = ${keyHash} AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
    ), counted AS (
      INSERT INTO rate_limit_window (subject, window_start, count)
      SELECT k.external_system_id::text, ${count.window}, 1 FROM k
       WHERE k.enabled AND (cardinality(${count.anyOfScopes as string[]}::text[]) = 0 OR k.scopes && ${count.anyOfScopes as string[]}::text[])
      ON CONFLICT (subject, window_start) DO UPDATE SET count = rate_limit_window.count + 1
      RETURNING count
    )
    SELECT k.*, (SELECT count FROM counted) AS window_count FROM k`.execute(db);
  return rows[0];
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

/** A partner's working keys, newest first: the live one, and the previous one while a rotation's overlap lasts. */
export async function findWorkingKeys(db: Executor, externalSystemId: string): Promise<{ key_prefix: string; expires_at: Date | null }[]> {
  return db
    .selectFrom('api_key')
    .select(['key_prefix', 'expires_at'])
    .where('external_system_id', '=', externalSystemId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .orderBy('created_at', 'desc')
    .limit(2)
    .execute();
}

/**
 * Before a rotation with an overlap: the newest working key keeps working until
 * `until` (or its own earlier expiry), every other key of the partner (an earlier
 * overlap's) stops at once. Returns the kept key's prefix and expiry, if any.
 */
export async function keepNewestKeyUntil(tx: Tx, externalSystemId: string, until: Date): Promise<{ key_prefix: string; expires_at: Date } | undefined> {
  const { rows } = await sql<{ key_prefix: string; expires_at: Date | null; n: string }>`
    WITH live AS (
      SELECT id, row_number() OVER (ORDER BY created_at DESC, id) AS n
        FROM api_key
       WHERE external_system_id = ${externalSystemId} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
    )
    UPDATE api_key k
       SET revoked_at = CASE WHEN live.n > 1 THEN now() ELSE NULL END,
           expires_at = CASE WHEN live.n = 1 THEN least(coalesce(k.expires_at, 'infinity'::timestamptz), ${until}) ELSE k.expires_at END
      FROM live
     WHERE k.id = live.id
    RETURNING k.key_prefix, k.expires_at, live.n::text AS n`.execute(tx);
  const kept = rows.find((r) => r.n === '1');
  return kept ? { key_prefix: kept.key_prefix, expires_at: kept.expires_at! } : undefined;
}
