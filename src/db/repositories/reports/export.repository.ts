import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../database.js';
import { filtered, type OrderListFilter } from '../operations/order-list.repository.js';

/**
 * The SELECTs behind the CSV exports, compiled (text and parameters) for a COPY: every
 * column already text as the spreadsheet shows it (words for codes, times in the city's
 * time zone), newest first. The filters are the lists' own.
 */
export interface ExportWords {
  status: readonly [string, string][];
  priority: readonly [string, string][];
  yesNo: readonly [string, string];
  /** reason name column: name_pt or name_en. */
  reasonName: 'name_pt' | 'name_en';
}

/** `CASE <column> WHEN code THEN word ... ELSE <column> END`. */
function words(column: RawBuilder<unknown>, table: readonly [string, string][]): RawBuilder<string> {
  return sql<string>`CASE ${column} ${sql.join(table.map(([code, word]) => sql`WHEN ${code} THEN ${word}`), sql` `)} ELSE ${column}::text END`;
}

function localTime(column: RawBuilder<unknown>, tz: string): RawBuilder<string> {
  return sql<string>`to_char(${column} AT TIME ZONE ${tz}, 'YYYY-MM-DD HH24:MI')`;
}

export function ordersExport(db: Executor, f: OrderListFilter, w: ExportWords, tz: string): { sql: string; parameters: readonly unknown[] } {
  return filtered(db, f)
    .leftJoin('team as t', 't.id', 'so.team_id')
    .leftJoin('pole as p', 'p.id', 'so.pole_id')
    .leftJoin('reason as r', (j) => j.onRef('r.tenant_id', '=', 'so.tenant_id').onRef('r.code', '=', 'so.reason_code'))
    .select([
      'so.number',
      words(sql.ref('so.status'), w.status).as('status'),
      words(sql.ref('so.priority'), w.priority).as('priority'),
      sql<string>`coalesce(${sql.ref(`r.${w.reasonName}`)}, so.reason_code)`.as('reason'),
      't.name as team',
      'p.code as pole',
      'so.address',
      'so.neighborhood',
      localTime(sql.ref('so.opened_at'), tz).as('opened'),
      localTime(sql.ref('so.sla_due_at'), tz).as('deadline'),
      localTime(sql.ref('so.closed_at'), tz).as('closed'),
      sql<string>`CASE WHEN so.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND so.sla_due_at < now() THEN ${w.yesNo[0]} ELSE ${w.yesNo[1]} END`.as('overdue'),
      sql<number>`(SELECT count(*) FROM alert ca WHERE ca.service_order_id = so.id)`.as('alerts'),
      sql<string>`(SELECT string_agg(DISTINCT ce.code, ' ' ORDER BY ce.code) FROM alert ca2 JOIN external_system ce ON ce.id = ca2.external_system_id WHERE ca2.service_order_id = so.id)`.as('partners'),
    ])
    .orderBy('so.opened_at', 'desc')
    .orderBy('so.id', 'desc')
    .compile();
}

export interface AlertExportFilter {
  tenantId: string;
  statuses: readonly string[];
  partnerCode?: string;
  from?: Date;
  to?: Date;
}

export function alertsExport(db: Executor, f: AlertExportFilter, w: ExportWords, tz: string): { sql: string; parameters: readonly unknown[] } {
  let q = db
    .selectFrom('alert as a')
    .innerJoin('external_system as es', 'es.id', 'a.external_system_id')
    .leftJoin('service_order as so', 'so.id', 'a.service_order_id')
    .leftJoin('reason as r', (j) => j.onRef('r.tenant_id', '=', 'a.tenant_id').onRef('r.code', '=', 'a.reason_code'))
    .where('a.tenant_id', '=', f.tenantId);
  if (f.statuses.length > 0) q = q.where('a.status', 'in', f.statuses as never);
  if (f.partnerCode) q = q.where('es.code', '=', f.partnerCode);
  if (f.from) q = q.where('a.created_at', '>=', f.from);
  if (f.to) q = q.where('a.created_at', '<', f.to);
  return q
    .select([
      sql<string>`'#' || a.alert_number`.as('number'),
      'a.protocol_number',
      'es.code as partner',
      words(sql.ref('a.status'), w.status).as('status'),
      sql<string>`coalesce(${sql.ref(`r.${w.reasonName}`)}, a.reason_code)`.as('reason'),
      words(sql.ref('a.priority'), w.priority).as('priority'),
      sql<string>`concat_ws(', ', a.address_street, a.address_number)`.as('address'),
      'a.address_neighborhood',
      localTime(sql.ref('a.created_at'), tz).as('received'),
      localTime(sql.ref('a.sla_due_at'), tz).as('deadline'),
      'so.number as order_number',
    ])
    .orderBy('a.created_at', 'desc')
    .orderBy('a.id', 'desc')
    .compile();
}

export function auditExport(db: Executor, tenantId: string, range: { from?: Date; to?: Date }, actions: readonly [string, string][], tz: string): { sql: string; parameters: readonly unknown[] } {
  let q = db.selectFrom('audit_log as l').where('l.tenant_id', '=', tenantId);
  if (range.from) q = q.where('l.at', '>=', range.from);
  if (range.to) q = q.where('l.at', '<', range.to);
  return q
    .select([
      localTime(sql.ref('l.at'), tz).as('at'),
      'l.actor',
      words(sql.ref('l.action'), actions).as('action'),
      // The object as an operator names it: the order's number, the alert's #number, the team's or partner's name.
      sql<string>`CASE l.entity_type
        WHEN 'service_order' THEN (SELECT so.number FROM service_order so WHERE so.id::text = l.entity_id)
        WHEN 'alert' THEN (SELECT '#' || a.alert_number FROM alert a WHERE a.id::text = l.entity_id)
        WHEN 'team' THEN (SELECT t.name FROM team t WHERE t.id::text = l.entity_id)
        WHEN 'partner' THEN (SELECT e.code FROM external_system e WHERE e.id::text = l.entity_id OR e.code = l.entity_id LIMIT 1)
        ELSE NULL END`.as('object'),
      'l.note',
    ])
    .orderBy('l.at', 'desc')
    .orderBy('l.id', 'desc')
    .compile();
}

/** The city's IANA time zone, or undefined when there is no such tenant. */
export async function tenantZone(db: Executor, tenantId: string): Promise<string | undefined> {
  return (await db.selectFrom('tenant').select('timezone').where('id', '=', tenantId).executeTakeFirst())?.timezone;
}
