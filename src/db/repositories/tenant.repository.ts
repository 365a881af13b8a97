import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../database.js';
import type { TenantTable } from '../tables/foundation.js';

export type TenantRow = Selectable<TenantTable>;

export async function insertTenant(db: Executor, row: Insertable<TenantTable>): Promise<TenantRow> {
  return db.insertInto('tenant').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findTenant(db: Executor, id: string): Promise<TenantRow | undefined> {
  return db.selectFrom('tenant').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Tenants oldest first: every one, or only those of `ids` (the caller's). */
export async function listTenants(db: Executor, ids: readonly string[] | 'all'): Promise<TenantRow[]> {
  if (ids !== 'all' && ids.length === 0) return [];
  let q = db.selectFrom('tenant').selectAll();
  if (ids !== 'all') q = q.where('id', 'in', ids);
  return q.orderBy('created_at').orderBy('id').execute();
}

export async function updateTenant(db: Executor, id: string, patch: Partial<Pick<TenantRow, 'name' | 'ibge_code' | 'intake_policy'>>): Promise<TenantRow | undefined> {
  return db.updateTable('tenant').set({ ...patch, updated_at: new Date() }).where('id', '=', id).returningAll().executeTakeFirst();
}
