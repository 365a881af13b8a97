import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from '../../database.js';
import type { IdempotencyKeyTable } from '../../tables/intake.js';

export type IdempotencyKeyRow = Selectable<IdempotencyKeyTable>;

export async function findIdempotencyKey(db: Executor, externalSystemId: string, key: string): Promise<IdempotencyKeyRow | undefined> {
  return db.selectFrom('idempotency_key').selectAll().where('external_system_id', '=', externalSystemId).where('key', '=', key).executeTakeFirst();
}

/** Stored in the transaction of the request it answers: it exists exactly when that request's effects do. */
export async function insertIdempotencyKey(tx: Tx, row: Insertable<IdempotencyKeyTable>): Promise<void> {
  await tx.insertInto('idempotency_key').values(row).execute();
}

/** Deletes keys older than the retention; returns how many. */
export async function deleteIdempotencyKeysOlderThan(db: Executor, days: number): Promise<number> {
  const res = await db
    .deleteFrom('idempotency_key')
    .where('created_at', '<', sql<Date>`now() - make_interval(days => ${days})`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
