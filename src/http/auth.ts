import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../lib/errors.js';
import { hashKey, keyMatches, parseKey } from '../lib/api-key.js';
import type { Scope } from '../db/tables/foundation.js';
import type { Database, Executor } from '../db/database.js';
import { findActiveKey, findActiveKeyCounted, type ActiveKey } from '../db/repositories/api-key.repository.js';
import { decideRateLimit, rateLimitWindow, type RateLimitDecision } from './rate-limit.js';

/** Who is calling a partner endpoint: resolved from X-Api-Key on every request. */
export interface PartnerPrincipal {
  readonly externalSystemId: string;
  readonly externalSystemCode: string;
  readonly tenantId: string;
  readonly ibgeCode: string | null;
  readonly scopes: readonly Scope[];
  /** The partner's own requests-per-minute limit; null = the service default. */
  readonly rateLimitPerMinute: number | null;
  /** Where this request left the key's quota, when authentication counted it (reported in RateLimit headers). */
  readonly quota?: RateLimitDecision;
  /** When the presented key stops working (a rotation's overlap); reported as Lumen-Key-Expires. */
  readonly keyExpiresAt?: Date | null;
  /** The readable prefix of the presented key (counted requests only). */
  readonly keyPrefix?: string;
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * 401 for a missing, malformed, unknown, rotated-away or expired key; 403
 * partner-disabled for a valid key of a disabled partner (N3). Lookup by the key's
 * id, then a constant-time comparison of the hashes.
 */
export async function authenticatePartner(db: Executor, headers: IncomingHttpHeaders): Promise<PartnerPrincipal> {
  const { presented, keyId } = presentedKey(headers);
  const row = await findActiveKey(db, keyId);
  if (!row || !keyMatches(presented, row.key_hash)) throw new AppError('unauthorized');
  return principalOf(row);
}

/**
 * authenticatePartner and the per-key rate limit (429, LUMEN_RATE_LIMIT_PER_MINUTE or
 * the partner's own) in one statement. A request refused for its scope is not
 * counted; requireScope refuses it after this.
 */
export async function authenticatePartnerCounted(db: Database, headers: IncomingHttpHeaders, opts: { anyOfScopes: readonly Scope[]; defaultLimitPerMinute: number }): Promise<PartnerPrincipal> {
  const { presented, keyId } = presentedKey(headers);
  const now = Date.now();
  const row = await findActiveKeyCounted(db, keyId, hashKey(presented), { window: rateLimitWindow(now), anyOfScopes: opts.anyOfScopes });
  if (!row) throw new AppError('unauthorized');
  const principal = { ...principalOf(row), keyExpiresAt: row.expires_at, keyPrefix: row.key_prefix };
  if (row.window_count === null) return principal;
  return { ...principal, quota: decideRateLimit(db, row.window_count, row.rate_limit_per_minute ?? opts.defaultLimitPerMinute, now) };
}

export function presentedKey(headers: IncomingHttpHeaders): { presented: string; keyId: string } {
  const presented = headerValue(headers, 'x-api-key')?.trim();
  const parsed = presented ? parseKey(presented) : null;
  if (!presented || !parsed || parsed.kind !== 'partner') throw new AppError('unauthorized');
  return { presented, keyId: parsed.keyId };
}

export function principalOf(row: ActiveKey): PartnerPrincipal {
  if (!row.enabled) throw new AppError('partner-disabled');
  return {
    externalSystemId: row.external_system_id,
    externalSystemCode: row.code,
    tenantId: row.tenant_id,
    ibgeCode: row.ibge_code,
    scopes: row.scopes,
    rateLimitPerMinute: row.rate_limit_per_minute,
  };
}

/** Any-of scope check; an empty list means "any valid key". */
export function requireScope(principal: PartnerPrincipal, anyOf: readonly Scope[]): void {
  if (anyOf.length === 0) return;
  if (!anyOf.some((s) => principal.scopes.includes(s))) throw new AppError('forbidden', { scopes: anyOf.join(' | ') });
}
