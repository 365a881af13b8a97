import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../database.js';
import type { AdminTokenTable } from '../tables/foundation.js';

export type AdminTokenRow = Selectable<AdminTokenTable>;

export async function insertAdminToken(db: Executor, row: Insertable<AdminTokenTable>): Promise<AdminTokenRow> {
  return db.insertInto('admin_token').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The live (not revoked) token with this key id. Read on every request: a revocation is effective at once. */
export async function findActiveAdminToken(db: Executor, keyId: string): Promise<AdminTokenRow | undefined> {
  return db.selectFrom('admin_token').selectAll().where('key_id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
}

export async function listAdminTokens(db: Executor): Promise<AdminTokenRow[]> {
  return db.selectFrom('admin_token').selectAll().orderBy('created_at').orderBy('id').execute();
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
