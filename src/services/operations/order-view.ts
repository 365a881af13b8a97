import type { Selectable } from 'kysely';
import type { ServiceOrder } from '../../../generated/partner/types.gen.js';
import type { Executor } from '../../db/database.js';
import type { ServiceOrderTable } from '../../db/tables/domain.js';

export type ServiceOrderRow = Selectable<ServiceOrderTable>;
export type ServiceOrderWithTeam = ServiceOrderRow & { team_name: string | null };

/** The 2.3 shape, used by reads, events and the operators' surfaces alike. */
export function serviceOrderView(row: ServiceOrderWithTeam): ServiceOrder {
  return {
    id: row.id,
    number: row.number,
    status: row.status,
    priority: row.priority,
    type: row.reason_code,
    address: row.address,
    neighborhood: row.neighborhood,
    latitude: row.latitude,
    longitude: row.longitude,
    poleId: row.pole_id,
    team: row.team_id ? { id: row.team_id, name: row.team_name ?? '' } : null,
    openedAt: row.opened_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    closedAt: row.closed_at ? row.closed_at.toISOString() : null,
  };
}

/** One service order with its team name, as serviceOrderView needs it. */
export async function loadServiceOrder(db: Executor, id: string): Promise<ServiceOrderWithTeam | undefined> {
  return db
    .selectFrom('service_order as so')
    .leftJoin('team as t', 't.id', 'so.team_id')
    .selectAll('so')
    .select('t.name as team_name')
    .where('so.id', '=', id)
    .executeTakeFirst();
}
