import { sql, type RawBuilder, type Selectable, type SqlBool, type UpdateObject } from 'kysely';
import type { Executor, Tx } from '../../database.js';
import { notAmong, notAmongInOrder } from './alert-group.repository.js';
import type { DB } from '../../schema.js';
import { matchesWords, searchWords } from './search.js';
import { ALERT_STATUSES, type AlertStatus, type AlertTable, type ReasonTable, type ServiceOrderStatus, type ServiceOrderTable } from '../../tables/domain.js';

export type AlertRow = Selectable<AlertTable>;
export type ReasonRow = Selectable<ReasonTable>;
export type OrderRow = Selectable<ServiceOrderTable>;

/** An alert as operators see it: the row, its partner's code, its reason's names and its order's number and status. */
export type AlertDetailRow = AlertRow & {
  partner_code: string;
  reason_name_pt: string | null;
  reason_name_en: string | null;
  order_number: string | null;
  order_status: ServiceOrderStatus | null;
  /** The last partner resend that changed the description or the location (audit `alert.partner-update`). */
  updated_by_partner_at: Date | null;
};

function detailQuery(db: Executor) {
  return db
    .selectFrom('alert as a')
    .innerJoin('external_system as es', 'es.id', 'a.external_system_id')
    .leftJoin('reason as r', (j) => j.onRef('r.tenant_id', '=', 'a.tenant_id').onRef('r.code', '=', 'a.reason_code'))
    .leftJoin('service_order as so', 'so.id', 'a.service_order_id')
    .selectAll('a')
    .select(['es.code as partner_code', 'r.name_pt as reason_name_pt', 'r.name_en as reason_name_en', 'so.number as order_number', 'so.status as order_status'])
    // audit_log_entity_idx (entity_type, entity_id, id) answers this per alert.
    .select((eb) =>
      eb
        .selectFrom('audit_log as al')
        .where('al.entity_id', '=', sql<string>`a.id::text`)
        .where('al.entity_type', '=', 'alert')
        .where('al.action', '=', 'alert.partner-update')
        .select((e) => e.fn.max('al.at').as('at'))
        .as('updated_by_partner_at'),
    );
}

/** One alert, when it belongs to one of `tenants` (the caller's; 'all' once the caller is checked). */
export async function findAlertDetail(db: Executor, id: string, tenants: readonly string[] | 'all'): Promise<AlertDetailRow | undefined> {
  if (tenants !== 'all' && tenants.length === 0) return undefined;
  let q = detailQuery(db).where('a.id', '=', id);
  if (tenants !== 'all') q = q.where('a.tenant_id', 'in', tenants);
  return q.executeTakeFirst();
}

export interface AlertFilter {
  tenantId: string;
  status?: AlertStatus;
  notGeolocated?: boolean;
  serviceOrderId?: string;
  /** The partner's code. */
  partnerCode?: string;
  reasonCode?: string;
  /** The reason code the partner sent, as received. */
  partnerReasonCode?: string;
  /** Pending or Linked and past the SLA deadline. */
  overdue?: boolean;
  /** Words found (accent- and case-insensitive) in what the inbox row shows, or a pole's code (search.ts). */
  text?: string;
  /** Grouped inbox (Pending only): the alerts it leaves out, those next to a group's leader (inboxHiddenAlerts). */
  hidden?: readonly string[];
}

/** `number`: oldest first by alert number; `age`: longest waiting first; `priority`: Critical first, then earliest deadline; `newest`: newest first. */
export type AlertSort = 'number' | 'age' | 'priority' | 'newest';

/**
 * The WHERE of the inbox list and its count (exported for the search test's EXPLAIN).
 * `page`: for the page's statement, whose rows are read in order up to a LIMIT (the
 * alerts left out are then looked up in a hashed list, notAmongInOrder); else for the
 * count. The status is written into the text, one of four: a plan made for any value
 * (a prepared statement's generic plan) can then still use the indexes kept for Pending
 * alerts only (alert_inbox_priority_idx).
 */
export function alertConditions(f: AlertFilter, page = false): RawBuilder<SqlBool> {
  const parts: RawBuilder<unknown>[] = [sql`a.tenant_id = ${f.tenantId}`];
  if (f.status) {
    if (!ALERT_STATUSES.includes(f.status)) throw new Error(`not an alert status: ${String(f.status)}`);
    parts.push(sql`a.status = ${sql.lit(f.status)}`);
  }
  if (f.notGeolocated) parts.push(sql`a.latitude IS NULL`);
  if (f.serviceOrderId) parts.push(sql`a.service_order_id = ${f.serviceOrderId}`);
  if (f.partnerCode) parts.push(sql`a.external_system_id = (SELECT pe.id FROM external_system pe WHERE pe.code = ${f.partnerCode})`);
  if (f.reasonCode) parts.push(sql`a.reason_code = ${f.reasonCode}`);
  if (f.partnerReasonCode) parts.push(sql`a.partner_reason_code = ${f.partnerReasonCode}`);
  if (f.overdue) parts.push(sql`a.status IN ('Pending', 'Linked') AND a.sla_due_at < now()`);
  // Every word of the text in what the row shows (search.ts), or the whole text a
  // pole's code (any case): the alerts linked to the orders on that pole. The pole
  // branch is an array computed once (an InitPlan) and says IS NOT NULL so the
  // partial alert_service_order_idx serves it: both branches are index scans
  // combined by a BitmapOr (test/search/search.test.ts checks the plan).
  if (f.text) {
    parts.push(sql`(${matchesWords('a.search_text', searchWords(f.text))}
      OR (a.service_order_id IS NOT NULL AND a.service_order_id = ANY(ARRAY(SELECT so.id FROM pole tp JOIN service_order so ON so.pole_id = tp.id
                                         WHERE upper(tp.code) = upper(${f.text}) AND tp.tenant_id = ${f.tenantId}))))`);
  }
  if (f.hidden) parts.push(page ? notAmongInOrder('a', f.hidden) : notAmong('a', f.hidden));
  return sql<SqlBool>`(${sql.join(parts, sql` AND `)})`;
}

/**
 * Critical first. The index alert_inbox_priority_idx (migration 0107) holds the Pending
 * alerts in this order, then deadline and number: a page sorted so reads its rows from
 * the index instead of sorting every Pending alert of the city. Its expression must stay
 * this one, written the same way.
 */
const ALERT_PRIORITY_RANK = sql`(CASE a.priority WHEN 'Critical' THEN 0 WHEN 'High' THEN 1 WHEN 'Medium' THEN 2 ELSE 3 END)`;

/** The statement of one page of listAlertDetails (exported for the tests' EXPLAIN). */
export function alertPageQuery(db: Executor, f: AlertFilter, offset: number, limit: number, sort: AlertSort = 'number') {
  let q = detailQuery(db).where(alertConditions(f, true));
  if (sort === 'age') q = q.orderBy('a.created_at').orderBy('a.alert_number');
  else if (sort === 'newest') q = q.orderBy('a.alert_number', 'desc');
  else if (sort === 'priority') q = q.orderBy(ALERT_PRIORITY_RANK).orderBy('a.sla_due_at').orderBy('a.alert_number');
  else q = q.orderBy('a.alert_number');
  return q.offset(offset).limit(limit);
}

/** One page of a tenant's alerts in the chosen order, and the number of matches. */
export async function listAlertDetails(db: Executor, f: AlertFilter, offset: number, limit: number, sort: AlertSort = 'number'): Promise<{ rows: AlertDetailRow[]; total: number }> {
  const countQ = db.selectFrom('alert as a').select((eb) => eb.fn.countAll<number>().as('n')).where(alertConditions(f));
  const [rows, count] = await Promise.all([alertPageQuery(db, f, offset, limit, sort).execute(), countQ.executeTakeFirstOrThrow()]);
  return { rows, total: Number(count.n) };
}

/** Row lock on one alert; waits for a concurrent action on it and returns the state it left. */
export async function lockAlert(tx: Tx, id: string): Promise<AlertRow | undefined> {
  return tx.selectFrom('alert').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Row locks on several alerts, in id order (so two batches that share alerts cannot deadlock). Unknown ids are simply absent. */
export async function lockAlerts(tx: Tx, ids: readonly string[]): Promise<AlertRow[]> {
  if (ids.length === 0) return [];
  return tx.selectFrom('alert').selectAll().where('id', 'in', [...ids]).orderBy('id').forUpdate().execute();
}

/** Several alerts, unlocked (a look before a transaction). */
export async function findAlerts(db: Executor, ids: readonly string[]): Promise<AlertRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('alert').selectAll().where('id', 'in', [...ids]).execute();
}

export async function peekAlertOrderId(tx: Tx, id: string): Promise<{ service_order_id: string | null; tenant_id: string } | undefined> {
  return tx.selectFrom('alert').select(['service_order_id', 'tenant_id']).where('id', '=', id).executeTakeFirst();
}

/** Row lock on one service order. Orders are always locked before their alerts. */
export async function lockOrder(tx: Tx, id: string): Promise<OrderRow | undefined> {
  return tx.selectFrom('service_order').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Row locks on every alert of an order, in id order (the order's own lock is already held). */
export async function lockAlertsOfOrder(tx: Tx, orderId: string): Promise<AlertRow[]> {
  return tx.selectFrom('alert').selectAll().where('service_order_id', '=', orderId).orderBy('id').forUpdate().execute();
}

/** Patch values may be SQL expressions (sql`now()`): timestamps come from the database clock. */
export async function updateAlert(tx: Tx, id: string, patch: UpdateObject<DB, 'alert', 'alert'>): Promise<AlertRow> {
  return tx.updateTable('alert').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function updateOrder(tx: Tx, id: string, patch: UpdateObject<DB, 'service_order', 'service_order'>): Promise<OrderRow> {
  return tx.updateTable('service_order').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function findReason(db: Executor, tenantId: string, code: string): Promise<ReasonRow | undefined> {
  return db.selectFrom('reason').selectAll().where('tenant_id', '=', tenantId).where('code', '=', code).executeTakeFirst();
}

export async function addAlertHistory(tx: Tx, row: { alert_id: string; from_status: string | null; to_status: string; actor: string; note?: string | null }): Promise<void> {
  await tx.insertInto('alert_status_history').values({ ...row, note: row.note ?? null }).execute();
}

export async function addOrderHistory(tx: Tx, row: { service_order_id: string; from_status: string | null; to_status: string; actor: string; note?: string | null }): Promise<void> {
  await tx.insertInto('service_order_status_history').values({ ...row, note: row.note ?? null }).execute();
}
