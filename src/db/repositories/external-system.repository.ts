import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from '../database.js';
import type { ExternalSystemTable } from '../tables/foundation.js';

export type ExternalSystemRow = Selectable<ExternalSystemTable>;

export async function insertExternalSystem(db: Executor, row: Insertable<ExternalSystemTable>): Promise<ExternalSystemRow> {
  return db.insertInto('external_system').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findExternalSystemByCode(db: Executor, code: string): Promise<ExternalSystemRow | undefined> {
  return db.selectFrom('external_system').selectAll().where('code', '=', code).executeTakeFirst();
}

export async function findExternalSystem(db: Executor, id: string): Promise<ExternalSystemRow | undefined> {
  return db.selectFrom('external_system').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Row lock for changes that must not interleave (rotation, updates). */
export async function lockExternalSystemByCode(tx: Tx, code: string): Promise<ExternalSystemRow | undefined> {
  return tx.selectFrom('external_system').selectAll().where('code', '=', code).forUpdate().executeTakeFirst();
}

/** Partners of `tenants` (the caller's, or 'all'), optionally of one tenant only. */
export async function listExternalSystems(db: Executor, tenants: readonly string[] | 'all', tenantId?: string): Promise<ExternalSystemRow[]> {
  if (tenants !== 'all' && tenants.length === 0) return [];
  let q = db.selectFrom('external_system').selectAll();
  if (tenants !== 'all') q = q.where('tenant_id', 'in', tenants);
  if (tenantId) q = q.where('tenant_id', '=', tenantId);
  return q.orderBy('code').execute();
}

export async function updateExternalSystem(db: Executor, id: string, patch: Updateable<ExternalSystemTable>): Promise<ExternalSystemRow> {
  return db.updateTable('external_system').set({ ...patch, updated_at: new Date() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}
