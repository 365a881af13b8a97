import { AppError } from '../../lib/errors.js';
import { issueKey } from '../../lib/api-key.js';
import { insertAdminToken, listAdminTokens, revokeAdminToken, type AdminTokenRow } from '../../db/repositories/admin-token.repository.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';

/** What operators see of an admin token: never the token itself, only its readable prefix. */
export interface AdminTokenView {
  id: string;
  name: string;
  keyPrefix: string;
  createdAt: string;
  revokedAt: string | null;
}

function adminTokenView(row: AdminTokenRow): AdminTokenView {
  return { id: row.id, name: row.name, keyPrefix: row.key_prefix, createdAt: row.created_at.toISOString(), revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null };
}

/** Issues an admin token. The token is returned once and never stored (only its SHA-256). */
export async function createAdminToken(deps: ServiceDeps, actor: Actor, name: string): Promise<AdminTokenView & { token: string }> {
  const trimmed = name?.trim() ?? '';
  if (trimmed.length < 1 || trimmed.length > 100) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/name', message: 'must be 1 to 100 characters' }]);
  const issued = issueKey('admin', deps.config.isProduction);
  return deps.db.transaction().execute(async (tx) => {
    const row = await insertAdminToken(tx, { name: trimmed, key_id: issued.keyId, key_prefix: issued.keyPrefix, key_hash: issued.hash, revoked_at: null });
    const view = adminTokenView(row);
    await recordAudit(tx, actor, { tenantId: null, action: 'admin-token.create', entityType: 'admin_token', entityId: row.id, before: null, after: view });
    return { ...view, token: issued.key };
  });
}

export async function listAllAdminTokens(deps: ServiceDeps): Promise<AdminTokenView[]> {
  return (await listAdminTokens(deps.db)).map(adminTokenView);
}

/** Revokes a token at once (every request reads the token row). Revoking a revoked token changes nothing. */
export async function revokeAdminTokenById(deps: ServiceDeps, actor: Actor, id: string): Promise<AdminTokenView> {
  if (!isUuid(id)) throw new AppError('not-found', { resource: `admin token ${id}` });
  return deps.db.transaction().execute(async (tx) => {
    const before = await tx.selectFrom('admin_token').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!before) throw new AppError('not-found', { resource: `admin token ${id}` });
    if (before.revoked_at) return adminTokenView(before);
    const row = (await revokeAdminToken(tx, id))!;
    await recordAudit(tx, actor, { tenantId: null, action: 'admin-token.revoke', entityType: 'admin_token', entityId: id, before: adminTokenView(before), after: adminTokenView(row) });
    return adminTokenView(row);
  });
}
