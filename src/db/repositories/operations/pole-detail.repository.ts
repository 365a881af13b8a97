import { sql } from 'kysely';
import type { Executor } from '../../database.js';

/** Open first (`OPEN`, `ASSIGNED`, `IN_PROGRESS`), then the newest. */
const ORDER_OPEN_FIRST = sql<number>`(CASE WHEN so.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') THEN 0 ELSE 1 END)`;
/** Open first (`Pending`, `Linked`), then the newest. */
const ALERT_OPEN_FIRST = sql<number>`(CASE WHEN a.status IN ('Pending', 'Linked') THEN 0 ELSE 1 END)`;

/**
 * A pole of a tenant by its code (active or not), with its telegestor (the one that
 * last communicated, should two name the same pole). Undefined when the tenant has no
 * pole of that code: another tenant's pole is never read.
 */
export async function findPoleByCode(db: Executor, tenantId: string, code: string) {
  return db
    .selectFrom('pole as p')
    .select(['p.id', 'p.tenant_id', 'p.code', 'p.address', 'p.neighborhood', 'p.latitude', 'p.longitude', 'p.active', 'p.circuit'])
    .select((eb) => [
      eb
        .selectFrom('telegestor as g')
        .select(sql<Record<string, unknown>>`json_build_object('id', g.id, 'identifier', g.identifier, 'online', g.online, 'relay_on', g.relay_on, 'last_communication_at', g.last_communication_at, 'offline_since', g.offline_since, 'relay_off_since', g.relay_off_since)`.as('g'))
        .whereRef('g.pole_id', '=', 'p.id')
        .orderBy(sql`g.last_communication_at DESC NULLS LAST`)
        .orderBy('g.id')
        .limit(1)
        .as('telegestor'),
    ])
    .where('p.tenant_id', '=', tenantId)
    .where('p.code', '=', code)
    .executeTakeFirst() as Promise<PoleByCodeRow | undefined>;
}

export interface PoleTelegestorJson {
  id: string;
  identifier: string;
  online: boolean | null;
  relay_on: boolean | null;
  last_communication_at: string | null;
  offline_since: string | null;
  relay_off_since: string | null;
}

export interface PoleByCodeRow {
  id: string;
  tenant_id: string;
  code: string;
  address: string;
  neighborhood: string;
  latitude: number;
  longitude: number;
  active: boolean;
  circuit: string | null;
  telegestor: PoleTelegestorJson | null;
}

/** The newest `limit` changes of state of a telegestor (0089), newest first. */
export async function telegestorStates(db: Executor, tenantId: string, telegestorId: string, limit: number) {
  return db
    .selectFrom('telegestor_state_change')
    .select(['online', 'relay_on', 'reported_at'])
    .where('tenant_id', '=', tenantId)
    .where('telegestor_id', '=', telegestorId)
    .orderBy('reported_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The orders on a pole, open first, then the newest; at most `limit`. */
export async function poleOrders(db: Executor, tenantId: string, poleId: string, limit: number) {
  return db
    .selectFrom('service_order as so')
    .select(['so.id', 'so.number', 'so.status', 'so.priority', 'so.reason_code', 'so.opened_at', 'so.closed_at', 'so.sla_due_at'])
    .where('so.tenant_id', '=', tenantId)
    .where('so.pole_id', '=', poleId)
    .orderBy(ORDER_OPEN_FIRST)
    .orderBy('so.opened_at', 'desc')
    .orderBy('so.id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * The alerts on a pole: those linked to one of its orders and the telemetry alert
 * raised for its lamp (0015); open first, then the newest; at most `limit`. Reason
 * names in both languages.
 */
export async function poleAlerts(db: Executor, tenantId: string, poleId: string, limit: number) {
  return db
    .selectFrom('alert as a')
    .leftJoin('reason as r', (j) => j.onRef('r.tenant_id', '=', 'a.tenant_id').onRef('r.code', '=', 'a.reason_code'))
    .select(['a.id', 'a.alert_number', 'a.status', 'a.reason_code', 'a.priority', 'a.requested_at', 'a.service_order_id', 'r.name_pt', 'r.name_en'])
    .where('a.tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb('a.service_order_id', 'in', eb.selectFrom('service_order as so').select('so.id').where('so.tenant_id', '=', tenantId).where('so.pole_id', '=', poleId)),
        eb('a.id', 'in', eb.selectFrom('telemetry_lamp_out as l').select('l.alert_id').where('l.tenant_id', '=', tenantId).where('l.pole_id', '=', poleId)),
      ]),
    )
    .orderBy(ALERT_OPEN_FIRST)
    .orderBy('a.requested_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(limit)
    .execute();
}
