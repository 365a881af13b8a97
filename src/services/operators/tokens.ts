import { AppError, type FieldError } from '../../lib/errors.js';
import { issueKey } from '../../lib/api-key.js';
import { parseDateTime } from '../../lib/time.js';
import type { Executor } from '../../db/database.js';
import type { AdminTokenScope } from '../../db/tables/foundation.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { findOperator, findOperatorByEmail, grantsOfOperators, listOperators, type OperatorRow } from '../../db/repositories/operators/operator.repository.js';
import { grantsOfTokens, insertAdminToken, listAdminTokens, lockAdminToken, revokeAdminToken, type AdminTokenRow } from '../../db/repositories/operators/admin-token.repository.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { isTenantRole, requirePlatformAdmin, roleAtLeast, roleOn, TENANT_ROLES, type AdminAccess, type TenantRole } from './access.js';
import { accessOfOperator } from './principal.js';

/** What operators see of an admin token: never the token itself, only its readable prefix. */
export interface AdminTokenView {
  id: string;
  name: string;
  keyPrefix: string;
  /** platform: every tenant; owner: its operator's access; grants: the grants below (cut to the operator's own roles). */
  scope: AdminTokenScope;
  operator: { id: string; email: string; name: string } | null;
  grants: { tenantId: string; role: TenantRole }[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

type Owners = ReadonlyMap<string, Pick<OperatorRow, 'id' | 'email' | 'name'>>;

function adminTokenView(row: AdminTokenRow, grants: readonly { admin_token_id: string; tenant_id: string; role: TenantRole }[], owners: Owners): AdminTokenView {
  const owner = row.operator_id ? owners.get(row.operator_id) : undefined;
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scope: row.scope,
    operator: owner ? { id: owner.id, email: owner.email, name: owner.name } : null,
    grants: grants.filter((g) => g.admin_token_id === row.id).map((g) => ({ tenantId: g.tenant_id, role: g.role })),
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at ? row.expires_at.toISOString() : null,
    revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}

async function viewsOf(db: Executor, rows: readonly AdminTokenRow[]): Promise<AdminTokenView[]> {
  const grants = await grantsOfTokens(db, rows.map((r) => r.id));
  const owners = new Map((await listOperators(db)).map((o) => [o.id, o]));
  return rows.map((r) => adminTokenView(r, grants, owners));
}

export interface CreateAdminTokenInput {
  name: string;
  /** The operator the token belongs to (id or e-mail). Default: the caller when the caller is an operator. */
  operator?: string;
  /** A service token (no operator) even when the caller is an operator. */
  service?: boolean;
  /** Every tenant (platform admins only). */
  platformAdmin?: boolean;
  /** The token's own tenants and roles; for an operator's token, a narrowing of the operator's. */
  grants?: readonly { tenantId: string; role: string }[];
  /** ISO 8601; the token stops working then. */
  expiresAt?: string | null;
}

function invalid(errors: FieldError[]): AppError {
  return new AppError('validation-failed', { count: errors.length }, errors);
}

/**
 * Issues an admin token, returned once (only its SHA-256 is stored). Who may make what:
 * - no grants and no operator: a platform-wide service token (platform admins; the CLI);
 * - a service token with grants: city-admin of every tenant it names;
 * - a token of one's own (an operator calling): always, narrowed by grants within one's roles;
 * - a token of another operator: platform admins.
 * A tenant the caller cannot see answers as one that does not exist (422 no such tenant).
 */
export async function createAdminToken(deps: ServiceDeps, actor: Actor, request: string | CreateAdminTokenInput): Promise<AdminTokenView & { token: string }> {
  const input: CreateAdminTokenInput = typeof request === 'string' ? { name: request } : request;
  const access = actor.access;
  const errors: FieldError[] = [];
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length < 1 || name.length > 100) errors.push({ pointer: '/name', message: 'must be 1 to 100 characters' });
  const grants: { tenantId: string; role: TenantRole }[] = [];
  (input.grants ?? []).forEach((g, i) => {
    if (!isUuid(g?.tenantId ?? '')) errors.push({ pointer: `/grants/${i}/tenantId`, message: 'must be a tenant id (UUID)' });
    else if (!isTenantRole(g.role)) errors.push({ pointer: `/grants/${i}/role`, message: `must be one of: ${TENANT_ROLES.join(', ')}` });
    else grants.push({ tenantId: g.tenantId, role: g.role });
  });
  if (new Set(grants.map((g) => g.tenantId)).size !== grants.length) errors.push({ pointer: '/grants', message: 'names a tenant twice' });
  if (input.platformAdmin && grants.length > 0) errors.push({ pointer: '/grants', message: 'a platform-wide token takes no grants' });
  if (input.service && input.operator !== undefined) errors.push({ pointer: '/operator', message: 'a service token has no operator' });
  let expiresAt: Date | null = null;
  if (input.expiresAt !== undefined && input.expiresAt !== null) {
    expiresAt = parseDateTime(input.expiresAt);
    if (!expiresAt || expiresAt.getTime() <= Date.now()) errors.push({ pointer: '/expiresAt', message: 'must be an ISO 8601 date-time in the future' });
  }
  if (errors.length > 0) throw invalid(errors);

  let owner: OperatorRow | null = null;
  if (input.operator !== undefined) {
    const ref = input.operator.trim();
    const found = isUuid(ref) ? await findOperator(deps.db, ref) : await findOperatorByEmail(deps.db, ref);
    const mine = found !== undefined && found.id === actor.operatorId;
    if (!mine) requirePlatformAdmin(access);
    if (!found || found.disabled_at) throw invalid([{ pointer: '/operator', message: 'no such operator (or disabled)' }]);
    owner = found;
  } else if (!input.service && actor.operatorId) {
    owner = (await findOperator(deps.db, actor.operatorId)) ?? null;
  }
  const scope: AdminTokenScope = grants.length > 0 ? 'grants' : input.platformAdmin || !owner ? 'platform' : 'owner';
  if (scope === 'platform') requirePlatformAdmin(access);

  // Each grant: a tenant the caller sees, within what the caller (service token) or the owner (own token) may hand out.
  const ownerAccess: AdminAccess | null = owner ? await accessOfOperator(deps.db, owner) : null;
  const refused: FieldError[] = [];
  for (const [i, g] of grants.entries()) {
    const held = roleOn(access, g.tenantId);
    if (held === null || !(await findTenant(deps.db, g.tenantId))) {
      refused.push({ pointer: `/grants/${i}/tenantId`, message: 'no such tenant' });
      continue;
    }
    if (ownerAccess) {
      const ownerRole = roleOn(ownerAccess, g.tenantId);
      if (ownerRole === null || !roleAtLeast(ownerRole, g.role)) refused.push({ pointer: `/grants/${i}/role`, message: "more than the token's operator holds on this tenant" });
    } else if (held !== 'city-admin') {
      throw new AppError('forbidden', { scopes: 'city-admin' });
    }
  }
  if (refused.length > 0) throw invalid(refused);

  const issued = issueKey('admin', deps.config.isProduction);
  return deps.db.transaction().execute(async (tx) => {
    const row = await insertAdminToken(
      tx,
      // A service token made by an operator remembers them: it reaches no further than they do (accessOfToken).
      { name, key_id: issued.keyId, key_prefix: issued.keyPrefix, key_hash: issued.hash, revoked_at: null, operator_id: owner?.id ?? null, scope, expires_at: expiresAt, made_by: owner ? null : (actor.operatorId ?? null) },
      grants.map((g) => ({ tenant_id: g.tenantId, role: g.role })),
    );
    const [view] = await viewsOf(tx, [row]);
    await recordAudit(tx, actor, { tenantId: grants.length === 1 ? grants[0]!.tenantId : null, action: 'admin-token.create', entityType: 'admin_token', entityId: row.id, before: null, after: view });
    return { ...view!, token: issued.key };
  });
}

/**
 * Whether the caller may see (and revoke) a token: platform admins every token; an
 * operator their own; a city-admin the tokens that reach one of their tenants (by the
 * token's own grants, or by its operator's when it carries theirs). Platform-wide
 * tokens reach no tenant in particular: only platform admins and their owner see them.
 */
function visibility(access: AdminAccess, operatorId: string | undefined): (row: AdminTokenRow, tokenTenants: readonly string[]) => boolean {
  if (access.platformAdmin) return () => true;
  const administered = new Set([...access.grants].filter(([, role]) => role === 'city-admin').map(([t]) => t));
  return (row, tokenTenants) => (operatorId !== undefined && row.operator_id === operatorId) || tokenTenants.some((t) => administered.has(t));
}

/** The tenants a token reaches, for the visibility rule above (platform-wide: none in particular). */
async function tenantsOfTokens(db: Executor, rows: readonly AdminTokenRow[]): Promise<Map<string, string[]>> {
  const own = await grantsOfTokens(db, rows.map((r) => r.id));
  const owners = [...new Set(rows.filter((r) => r.scope === 'owner' && r.operator_id).map((r) => r.operator_id!))];
  const operatorGrants = await grantsOfOperators(db, owners);
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const tenants = r.scope === 'grants' ? own.filter((g) => g.admin_token_id === r.id).map((g) => g.tenant_id) : r.scope === 'owner' ? operatorGrants.filter((g) => g.operator_id === r.operator_id).map((g) => g.tenant_id) : [];
    out.set(r.id, tenants);
  }
  return out;
}

/** The tokens the caller may see, oldest first. */
export async function listAdminTokensFor(deps: ServiceDeps, access: AdminAccess, operatorId?: string): Promise<AdminTokenView[]> {
  const rows = await listAdminTokens(deps.db);
  const visible = visibility(access, operatorId);
  const tenants = await tenantsOfTokens(deps.db, rows);
  return viewsOf(deps.db, rows.filter((r) => visible(r, tenants.get(r.id) ?? [])));
}

/** Every token (the CLI, on the server). */
export async function listAllAdminTokens(deps: ServiceDeps): Promise<AdminTokenView[]> {
  return viewsOf(deps.db, await listAdminTokens(deps.db));
}

/** Revokes a token at once (every request reads the token row). Revoking a revoked token changes nothing. A token the caller may not see: not-found. */
export async function revokeAdminTokenById(deps: ServiceDeps, actor: Actor, id: string): Promise<AdminTokenView> {
  if (!isUuid(id)) throw new AppError('not-found', { resource: `admin token ${id}` });
  return deps.db.transaction().execute(async (tx) => {
    const before = await lockAdminToken(tx, id);
    const visible = visibility(actor.access, actor.operatorId);
    if (!before || !visible(before, (await tenantsOfTokens(tx, [before])).get(before.id) ?? [])) throw new AppError('not-found', { resource: `admin token ${id}` });
    const [beforeView] = await viewsOf(tx, [before]);
    if (before.revoked_at) return beforeView!;
    const row = (await revokeAdminToken(tx, id))!;
    const [view] = await viewsOf(tx, [row]);
    await recordAudit(tx, actor, { tenantId: null, action: 'admin-token.revoke', entityType: 'admin_token', entityId: id, before: beforeView, after: view });
    return view!;
  });
}
