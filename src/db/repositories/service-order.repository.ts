import { sql, type Insertable, type Selectable } from 'kysely';
import type { Tx } from '../database.js';
import type { ServiceOrderStatus, ServiceOrderTable } from '../tables/domain.js';

export type ServiceOrderRow = Selectable<ServiceOrderTable>;

/** sla_due_at is now() + slaHours in the database clock. */
export async function insertServiceOrder(tx: Tx, row: Omit<Insertable<ServiceOrderTable>, 'sla_due_at'>, slaHours: number): Promise<ServiceOrderRow> {
  return tx
    .insertInto('service_order')
    .values({ ...row, sla_due_at: sql<Date>`now() + make_interval(hours => ${slaHours})` })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertServiceOrderStatusHistory(tx: Tx, row: { service_order_id: string; from_status: ServiceOrderStatus | null; to_status: ServiceOrderStatus; actor: string; note?: string | null }): Promise<void> {
  await tx.insertInto('service_order_status_history').values({ ...row, note: row.note ?? null }).execute();
}

/**
 * Fills an order's coordinates once they are known, only while it is still OPEN and
 * has none: an order's location never moves silently.
 */
export async function fillServiceOrderLocation(tx: Tx, id: string, latitude: number, longitude: number): Promise<boolean> {
  const res = await tx
    .updateTable('service_order')
    .set({ latitude, longitude })
    .where('id', '=', id)
    .where('status', '=', 'OPEN')
    .where('latitude', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
