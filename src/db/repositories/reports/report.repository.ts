import { sql } from 'kysely';
import type { Database, Executor } from '../../database.js';

/** Age buckets of the backlog, in the contract's names (ReportAge). */
const AGE = (column: string) =>
  sql.raw(`CASE WHEN now() - ${column} < interval '1 day' THEN 'd0_1' WHEN now() - ${column} < interval '3 days' THEN 'd1_3'
    WHEN now() - ${column} < interval '7 days' THEN 'd3_7' WHEN now() - ${column} < interval '30 days' THEN 'd7_30' ELSE 'd30_plus' END`);

export interface BacklogRows {
  orders: { status: string; age: string; count: number }[];
  pendingAlerts: { age: string; count: number }[];
  overdueOrders: number;
}

/**
 * The open orders by status and age, with how many of each are past their deadline: one
 * pass over the city's open orders, from service_order_open_opened_idx alone (0108: it
 * carries the status and the deadline).
 */
export function backlogOrdersStatement(tenantId: string) {
  return sql<{ status: string; age: string; count: number; overdue: number }>`
      SELECT so.status, ${AGE('so.opened_at')} AS age, count(*)::int AS count, (count(*) FILTER (WHERE so.sla_due_at < now()))::int AS overdue
      FROM service_order so
      WHERE so.tenant_id = ${tenantId} AND so.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS')
      GROUP BY 1, 2 ORDER BY 1, 2`;
}

/** The open orders by status and age, the Pending alerts by age, the overdue open orders: now. */
export async function backlog(db: Executor, tenantId: string): Promise<BacklogRows> {
  const [orders, alerts] = await Promise.all([
    backlogOrdersStatement(tenantId).execute(db),
    sql<{ age: string; count: number }>`
      SELECT ${AGE('a.created_at')} AS age, count(*)::int AS count
      FROM alert a WHERE a.tenant_id = ${tenantId} AND a.status = 'Pending'
      GROUP BY 1 ORDER BY 1`.execute(db),
  ]);
  return {
    orders: orders.rows.map((o) => ({ status: o.status, age: o.age, count: o.count })),
    pendingAlerts: alerts.rows,
    overdueOrders: orders.rows.reduce((n, o) => n + o.overdue, 0),
  };
}

/** One figure of a breakdown, as PostgreSQL groups it: `dim` says which grouping set (overall, team, reason, partner). */
export interface FigureRow {
  dim: 'overall' | 'team' | 'reason' | 'partner';
  key: string | null;
  label_pt: string | null;
  label_en: string | null;
  count: number;
  p50: number | null;
  p90: number | null;
  on_time: number | null;
}

/**
 * Time to triage over [from, to): every operator decision on a Pending alert taken in the
 * period (linked to an order, or discarded), measured from when the alert last became
 * Pending (its arrival, or its return to triage when its order was cancelled). Alerts
 * that became orders at intake (automatic triage) were never Pending and do not count.
 *
 * The decisions come from alert_status_history_city_decision_idx (0113): the city's own,
 * each with the moment its alert last became Pending, recorded when it was written. The
 * index by time alone it replaces gave every city's decisions of the period, and each
 * was probed in its alert's history for that moment.
 */
export function triageStatement(tenantId: string, from: Date, to: Date) {
  return sql<FigureRow>`
    WITH d AS (
      SELECT a.id, a.reason_code, so.team_id, es.code AS partner_code,
        greatest(0, date_part('epoch', h.at - h.pending_since)) AS secs
      FROM alert_status_history h
      JOIN alert a ON a.id = h.alert_id AND a.tenant_id = ${tenantId}
      JOIN external_system es ON es.id = a.external_system_id
      LEFT JOIN service_order so ON so.id = a.service_order_id
      WHERE h.tenant_id = ${tenantId} AND h.from_status = 'Pending' AND h.to_status <> 'Pending' AND h.at >= ${from} AND h.at < ${to}
    )
    SELECT CASE WHEN GROUPING(d.team_id) = 0 THEN 'team' WHEN GROUPING(d.reason_code) = 0 THEN 'reason' WHEN GROUPING(d.partner_code) = 0 THEN 'partner' ELSE 'overall' END AS dim,
      coalesce(d.team_id::text, d.reason_code, d.partner_code) AS key,
      CASE WHEN GROUPING(d.team_id) = 0 THEN min(t.name) WHEN GROUPING(d.reason_code) = 0 THEN min(r.name_pt) ELSE d.partner_code END AS label_pt,
      CASE WHEN GROUPING(d.team_id) = 0 THEN min(t.name) WHEN GROUPING(d.reason_code) = 0 THEN min(r.name_en) ELSE d.partner_code END AS label_en,
      count(*)::int AS count,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY d.secs) AS p50,
      percentile_cont(0.9) WITHIN GROUP (ORDER BY d.secs) AS p90,
      NULL::int AS on_time
    FROM d
    LEFT JOIN team t ON t.id = d.team_id
    LEFT JOIN reason r ON r.tenant_id = ${tenantId} AND r.code = d.reason_code
    GROUP BY GROUPING SETS ((), (d.team_id), (d.reason_code), (d.partner_code))
    ORDER BY 1, count(*) DESC, 2`;
}

/**
 * The triage figures, planned without parallel workers: the dashboard runs them beside the
 * repair statement, its longest, and on the bench's 2-core machine a parallel plan here
 * took the cores that statement needed (the two together 750-780 ms, against 610-700 ms
 * with this one serial and 620-680 ms with the statement before 0113, which was serial).
 */
export async function triageFigures(db: Database, tenantId: string, from: Date, to: Date): Promise<FigureRow[]> {
  return db.transaction().execute(async (tx) => {
    await sql`SET LOCAL max_parallel_workers_per_gather = 0`.execute(tx);
    return (await triageStatement(tenantId, from, to).execute(tx)).rows;
  });
}

/**
 * Time to repair and SLA compliance over [from, to): the orders completed in the period,
 * each from its opening to its completion, on time when completed by its deadline. By
 * partner, an order counts once for each partner with an alert on it.
 *
 * The orders come from service_order_completed_idx alone (0106: it carries every column
 * read here), and the names of teams, reasons and partners are joined to the few groups
 * after the figures are computed, not to every order: on a city of 1,000,000 orders, with
 * 300,000 completed in the period, the two took the statement from 2.65 to 1.5 s on a
 * slow bench machine (bench/FINDINGS.md, "Landed on 2026-11-29"). The partners' orders
 * come from the city's linked alerts alone (an alert has an order exactly when it is
 * Linked or Resolved), so the statement reads none of another city's alerts, and a
 * deployment of many cities does not make one city's dashboard slower. Durations are
 * seconds as double precision (date_part), not numeric (extract), which the percentiles
 * sort faster.
 */
export function repairStatement(tenantId: string, from: Date, to: Date) {
  return sql<FigureRow>`
    WITH d AS (
      SELECT so.id, so.team_id, so.reason_code, greatest(0, date_part('epoch', so.closed_at - so.opened_at)) AS secs, (so.closed_at <= so.sla_due_at) AS on_time
      FROM service_order so
      WHERE so.tenant_id = ${tenantId} AND so.status = 'COMPLETED' AND so.closed_at >= ${from} AND so.closed_at < ${to}
    ),
    g AS (
      SELECT CASE WHEN GROUPING(d.team_id) = 0 THEN 'team' WHEN GROUPING(d.reason_code) = 0 THEN 'reason' ELSE 'overall' END AS dim,
        d.team_id, d.reason_code, count(*)::int AS count,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY d.secs) AS p50,
        percentile_cont(0.9) WITHIN GROUP (ORDER BY d.secs) AS p90,
        (count(*) FILTER (WHERE d.on_time))::int AS on_time
      FROM d GROUP BY GROUPING SETS ((), (d.team_id), (d.reason_code))
    ),
    p AS (
      SELECT b.external_system_id, count(*)::int AS count,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY b.secs) AS p50,
        percentile_cont(0.9) WITHIN GROUP (ORDER BY b.secs) AS p90,
        (count(*) FILTER (WHERE b.on_time))::int AS on_time
      FROM (SELECT DISTINCT d.id, d.secs, d.on_time, a.external_system_id
              FROM d JOIN alert a ON a.service_order_id = d.id AND a.tenant_id = ${tenantId} AND a.status IN ('Linked', 'Resolved')) b
      GROUP BY b.external_system_id
    )
    SELECT g.dim, coalesce(g.team_id::text, g.reason_code) AS key,
      CASE g.dim WHEN 'team' THEN t.name WHEN 'reason' THEN r.name_pt END AS label_pt,
      CASE g.dim WHEN 'team' THEN t.name WHEN 'reason' THEN r.name_en END AS label_en,
      g.count, g.p50, g.p90, g.on_time
    FROM g
    LEFT JOIN team t ON g.dim = 'team' AND t.id = g.team_id
    LEFT JOIN reason r ON g.dim = 'reason' AND r.tenant_id = ${tenantId} AND r.code = g.reason_code
    UNION ALL
    SELECT 'partner', es.code, es.code, es.code, p.count, p.p50, p.p90, p.on_time
    FROM p JOIN external_system es ON es.id = p.external_system_id
    ORDER BY 1, 5 DESC, 2`;
}

export async function repairFigures(db: Executor, tenantId: string, from: Date, to: Date): Promise<FigureRow[]> {
  const { rows } = await repairStatement(tenantId, from, to).execute(db);
  return rows;
}
