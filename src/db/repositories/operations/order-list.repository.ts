import { sql, type Expression, type SqlBool } from 'kysely';
import type { Executor } from '../../database.js';
import type { ServiceOrderStatus } from '../../tables/domain.js';
import type { Selectable } from 'kysely';
import type { ServiceOrderTable } from '../../tables/domain.js';
import type { TenantSet } from './lookup.repository.js';
import { matchesWords, searchWords } from './search.js';

export type OrderSort = 'opened' | 'sla' | 'priority';

export interface OrderListFilter {
  tenants: TenantSet;
  statuses?: readonly ServiceOrderStatus[];
  teamId?: string;
  overdue?: boolean;
  reasonCode?: string;
  partnerCode?: string;
  /** Words found (accent- and case-insensitive) in number, address and neighbourhood, or a pole's code (search.ts). */
  text?: string;
  /** Opened at or after / before (the dashboard's age and period figures link here). */
  openedAfter?: Date;
  openedBefore?: Date;
}

/** Where the last page ended: the sort key of its last row, as text (timestamps keep their microseconds). */
export interface OrderKeyset {
  key: string;
  rank: number;
  id: string;
}

export type OrderListRow = Selectable<ServiceOrderTable> & { team_name: string | null; sort_key: string; priority_rank: number; alert_count: number; partner_codes: string[] | null; pole_code: string | null; visit_starts_at: Date | null; visit_ends_at: Date | null };

const OPEN: readonly ServiceOrderStatus[] = ['OPEN', 'ASSIGNED', 'IN_PROGRESS'];

/** Critical first: the order of the `priority` sort. */
export const PRIORITY_RANK = sql<number>`(CASE so.priority WHEN 'Critical' THEN 0 WHEN 'High' THEN 1 WHEN 'Medium' THEN 2 ELSE 3 END)`;

/** The orders matching a filter (no columns chosen yet): the list's pages and the CSV export share it. */
export function filtered(db: Executor, f: OrderListFilter) {
  let q = db.selectFrom('service_order as so');
  if (f.tenants !== null) q = q.where('so.tenant_id', 'in', f.tenants.length ? f.tenants : ['00000000-0000-0000-0000-000000000000']);
  if (f.statuses?.length) q = q.where('so.status', 'in', f.statuses);
  if (f.teamId) q = q.where('so.team_id', '=', f.teamId);
  if (f.overdue) q = q.where('so.status', 'in', OPEN).where('so.sla_due_at', '<', sql<Date>`now()`);
  if (f.reasonCode) q = q.where('so.reason_code', '=', f.reasonCode);
  if (f.partnerCode) {
    const code = f.partnerCode;
    q = q.where(({ exists, selectFrom }) =>
      exists(selectFrom('alert as pa').innerJoin('external_system as pe', 'pe.id', 'pa.external_system_id').select(sql`1`.as('one')).whereRef('pa.service_order_id', '=', 'so.id').where('pe.code', '=', code)),
    );
  }
  if (f.openedAfter) q = q.where('so.opened_at', '>=', f.openedAfter);
  if (f.openedBefore) q = q.where('so.opened_at', '<', f.openedBefore);
  if (f.text) {
    const text = f.text;
    // Every word in the number, address or neighbourhood (search.ts), or the whole
    // text a pole's code (any case): the orders on that pole.
    q = q.where((eb) =>
      eb.or([
        matchesWords('so.search_text', searchWords(text)),
        sql<SqlBool>`so.pole_id = ANY(ARRAY(SELECT tp.id FROM pole tp WHERE upper(tp.code) = upper(${text})))`,
      ]),
    );
  }
  return q;
}

function sortKey(sort: OrderSort) {
  return sort === 'opened' ? sql<string>`so.opened_at::text` : sql<string>`so.sla_due_at::text`;
}

function after(sort: OrderSort, k: OrderKeyset): Expression<SqlBool> {
  if (sort === 'opened') return sql<SqlBool>`(so.opened_at, so.id) < (${k.key}::timestamptz, ${k.id}::uuid)`;
  if (sort === 'sla') return sql<SqlBool>`(so.sla_due_at, so.id) > (${k.key}::timestamptz, ${k.id}::uuid)`;
  return sql<SqlBool>`(${PRIORITY_RANK}, so.sla_due_at, so.id) > (${k.rank}::int, ${k.key}::timestamptz, ${k.id}::uuid)`;
}

/**
 * One page of orders (limit + 1 rows: the extra one says another page follows).
 * `opened`: newest first; `sla`: earliest deadline first; `priority`: Critical first,
 * then earliest deadline. Ties break on id, so the keyset never skips or repeats a row.
 */
export async function listOrderPage(db: Executor, f: OrderListFilter, sort: OrderSort, from: OrderKeyset | null, limit: number): Promise<OrderListRow[]> {
  let q = withListColumns(filtered(db, f), sort);
  if (from) q = q.where(after(sort, from));
  if (sort === 'opened') q = q.orderBy('so.opened_at', 'desc').orderBy('so.id', 'desc');
  else if (sort === 'sla') q = q.orderBy('so.sla_due_at').orderBy('so.id');
  else q = q.orderBy(PRIORITY_RANK).orderBy('so.sla_due_at').orderBy('so.id');
  const rows = await q.limit(limit + 1).execute();
  return rows.map((r) => ({ ...r, alert_count: Number(r.alert_count ?? 0) })) as OrderListRow[];
}

/** One order as the list shows it (its team, linked alerts and their partners), by id; undefined when there is none. */
export async function findOrderListRow(db: Executor, id: string): Promise<OrderListRow | undefined> {
  const row = await withListColumns(db.selectFrom('service_order as so').where('so.id', '=', id), 'opened').executeTakeFirst();
  return row ? ({ ...row, alert_count: Number(row.alert_count ?? 0) } as OrderListRow) : undefined;
}

/** The open orders of some teams of one tenant ("my team today"): Critical first, then by deadline. */
export async function listOpenOrdersOfTeams(db: Executor, tenantId: string, teamIds: readonly string[]): Promise<OrderListRow[]> {
  if (teamIds.length === 0) return [];
  const rows = await withListColumns(
    db.selectFrom('service_order as so').where('so.tenant_id', '=', tenantId).where('so.team_id', 'in', teamIds).where('so.status', 'in', OPEN),
    'sla',
  )
    .orderBy(PRIORITY_RANK)
    .orderBy('so.sla_due_at')
    .orderBy('so.number')
    .limit(10000)
    .execute();
  return rows.map((r) => ({ ...r, alert_count: Number(r.alert_count ?? 0) })) as OrderListRow[];
}

function withListColumns(q: ReturnType<typeof filtered>, sort: OrderSort) {
  return q
    .leftJoin('team as t', 't.id', 'so.team_id')
    .leftJoin('service_order_visit as sv', 'sv.service_order_id', 'so.id')
    .selectAll('so')
    .select(['t.name as team_name', sortKey(sort).as('sort_key'), PRIORITY_RANK.as('priority_rank'), 'sv.starts_at as visit_starts_at', 'sv.ends_at as visit_ends_at'])
    .select((eb) => [
      eb.selectFrom('alert as ca').select(eb.fn.countAll<number>().as('n')).whereRef('ca.service_order_id', '=', 'so.id').as('alert_count'),
      sql<string[] | null>`(SELECT array_agg(DISTINCT ce.code ORDER BY ce.code) FROM alert ca2 JOIN external_system ce ON ce.id = ca2.external_system_id WHERE ca2.service_order_id = so.id)`.as('partner_codes'),
      eb.selectFrom('pole as op').select('op.code').whereRef('op.id', '=', 'so.pole_id').as('pole_code'),
    ]);
}

export async function countOrders(db: Executor, f: OrderListFilter): Promise<number> {
  const row = await filtered(db, f).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
