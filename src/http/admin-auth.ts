import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../lib/errors.js';
import { keyMatches, parseKey } from '../lib/api-key.js';
import type { Executor } from '../db/database.js';
import { findActiveAdminToken } from '../db/repositories/admin-token.repository.js';
import type { Actor } from '../services/audit/index.js';
import { PLATFORM_ACCESS, type AdminAccess } from '../services/operators/index.js';

/** Who is calling the admin API: resolved from `Authorization: Bearer lmn_adm_...` on every request. */
export interface AdminPrincipal {
  readonly tokenId: string;
  readonly tokenName: string;
  /** As recorded in status history and the audit log. */
  readonly actor: Actor;
  /** Tenants and roles this caller may reach (every handler checks it: services/operators/access.ts). */
  readonly access: AdminAccess;
}

const CHALLENGE = { 'www-authenticate': 'Bearer realm="lumen-admin"' };

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers.authorization;
  if (!raw) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(raw);
  return m?.[1];
}

/**
 * 401 invalid-admin-token for a missing, malformed, unknown or revoked token, and for
 * a partner API key (whatever header carries it): the two kinds never cross surfaces.
 */
export async function authenticateAdmin(db: Executor, headers: IncomingHttpHeaders): Promise<AdminPrincipal> {
  const presented = bearer(headers);
  const parsed = presented ? parseKey(presented) : null;
  if (!presented || !parsed || parsed.kind !== 'admin') throw new AppError('invalid-admin-token', {}, undefined, CHALLENGE);
  const row = await findActiveAdminToken(db, parsed.keyId);
  if (!row || !keyMatches(presented, row.key_hash)) throw new AppError('invalid-admin-token', {}, undefined, CHALLENGE);
  return { tokenId: row.id, tokenName: row.name, actor: { kind: 'admin-token', name: row.name, tokenId: row.id }, access: PLATFORM_ACCESS };
}
