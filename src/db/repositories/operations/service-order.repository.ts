import type { Selectable } from 'kysely';
import type { Tx } from '../../database.js';
import type { ServiceOrderTable } from '../../tables/domain.js';

export type ServiceOrderRow = Selectable<ServiceOrderTable>;

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
