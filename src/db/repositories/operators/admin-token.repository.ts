import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from '../../database.js';
import type { AdminTokenTable } from '../../tables/foundation.js';
import type { TenantRoleColumn } from '../../tables/operators.js';

export type AdminTokenRow = Selectable<AdminTokenTable>;

export async function insertAdminToken(tx: Tx, row: Insertable<AdminTokenTable>, grants: readonly { tenant_id: string; role: TenantRoleColumn }[]): Promise<AdminTokenRow> {
  const token = await tx.insertInto('admin_token').values(row).returningAll().executeTakeFirstOrThrow();
  if (grants.length > 0) await tx.insertInto('admin_token_grant').values(grants.map((g) => ({ admin_token_id: token.id, tenant_id: g.tenant_id, role: g.role }))).execute();
  return token;
}

/** A token row with what its access is made of: its owner (when it has one) as the row is now. */
export type LiveAdminToken = AdminTokenRow & {
  owner_email: string | null;
  owner_name: string | null;
  owner_platform_admin: boolean | null;
  owner_disabled_at: Date | null;
  /** The maker of a service token, as the row is now (null when it has none). */
  maker_platform_admin: boolean | null;
  maker_disabled_at: Date | null;
};

/**
 * The live token with this key id: not revoked, not expired. Read on every request
 * (no cache), with its owner's row, so a revocation, an expiry or a disabled owner
 * takes effect at once on every instance.
 */
export async function findLiveAdminToken(db: Executor, keyId: string): Promise<LiveAdminToken | undefined> {
  return db
    .selectFrom('admin_token as t')
    .leftJoin('operator as o', 'o.id', 't.operator_id')
    .leftJoin('operator as m', 'm.id', 't.made_by')
    .selectAll('t')
    .select(['o.email as owner_email', 'o.name as owner_name', 'o.platform_admin as owner_platform_admin', 'o.disabled_at as owner_disabled_at', 'm.platform_admin as maker_platform_admin', 'm.disabled_at as maker_disabled_at'])
    .where('t.key_id', '=', keyId)
    .where('t.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst();
}

export async function findAdminToken(db: Executor, id: string): Promise<AdminTokenRow | undefined> {
  return db.selectFrom('admin_token').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function lockAdminToken(tx: Tx, id: string): Promise<AdminTokenRow | undefined> {
  return tx.selectFrom('admin_token').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function listAdminTokens(db: Executor): Promise<AdminTokenRow[]> {
  return db.selectFrom('admin_token').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** The own grants of these tokens (scope `grants`). */
export async function grantsOfTokens(db: Executor, tokenIds: readonly string[]): Promise<{ admin_token_id: string; tenant_id: string; role: TenantRoleColumn }[]> {
  if (tokenIds.length === 0) return [];
  return db.selectFrom('admin_token_grant').select(['admin_token_id', 'tenant_id', 'role']).where('admin_token_id', 'in', tokenIds).orderBy('tenant_id').execute();
}

/** Revokes one token; undefined when there is no such token. Revoking twice keeps the first time. */
export async function revokeAdminToken(db: Executor, id: string): Promise<AdminTokenRow | undefined> {
  return db
    .updateTable('admin_token')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.fn<Date>('now')) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
