import { adminToken } from '../harness/admin.js';
import { HttpClient, isNotBuilt } from '../harness/http.js';
import { check, ratioOf, series } from '../harness/results.js';
import { median } from '../harness/stats.js';
import { psqlWall } from '../harness/postgres.js';
import { getOk, timeGet } from '../harness/timing.js';
import { Pending, Skipped, type BenchContext, type RowDefinition } from '../harness/context.js';

interface ReportCity {
  readonly tenantId: string;
  readonly orders: number;
}

/**
 * The reports rows' city: ctx.sizes.reportOrders service orders over the last 60 days,
 * about 60% completed (some late), the rest open at every age, spread over five teams;
 * one in ten with a partner's alert that an operator triaged. Seeded once per run in
 * SQL, as a city's years of work would leave them, and vacuumed.
 */
function reportCity(ctx: BenchContext): Promise<ReportCity> {
  return ctx.once('report-city', async () => {
    const count = ctx.sizes.reportOrders;
    const tenant = await ctx.createTenant('Bench reports city', 'manual');
    const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateAlerts'], transport: 'polling' });
    ctx.log(`seeding ${count.toLocaleString('en-US')} service orders for the reports rows`);
    await ctx.pool.query(
      `INSERT INTO team (tenant_id, name) SELECT $1, 'Equipe ' || g FROM generate_series(1, 5) g`,
      [tenant.id],
    );
    await ctx.pool.query(
      `WITH teams AS (SELECT array_agg(id ORDER BY name) AS ids FROM team WHERE tenant_id = $1),
       o AS (SELECT g, now() - (g % 60) * interval '1 day' - (g % 24) * interval '1 hour' AS opened FROM generate_series(1, $2::int) g)
       INSERT INTO service_order (tenant_id, number, status, priority, reason_code, address, neighborhood, team_id, sla_due_at, opened_at, closed_at)
       SELECT $1, 'OS-2026-' || lpad(o.g::text, 7, '0'),
              CASE WHEN o.g % 10 < 6 THEN 'COMPLETED' WHEN o.g % 10 < 8 THEN 'ASSIGNED' ELSE 'OPEN' END,
              (ARRAY['Low', 'Medium', 'High', 'Critical'])[1 + o.g % 4], 'EXTERNAL_OTHER',
              'Rua XV de Novembro, ' || o.g, 'Centro', teams.ids[1 + o.g % 5],
              o.opened + interval '2 days', o.opened,
              CASE WHEN o.g % 10 < 6 THEN o.opened + (o.g % 72) * interval '1 hour' END
         FROM o, teams`,
      [tenant.id, count],
    );
    await ctx.pool.query(
      `WITH picked AS (SELECT id, opened_at, row_number() OVER () AS n FROM service_order WHERE tenant_id = $1 AND number LIKE 'OS-2026-%' AND right(number, 1) = '0'),
       a AS (
         INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, reason_code, priority,
                            sla_due_at, address_street, address_neighborhood, description, service_order_id, created_at)
         SELECT $1, $2, 'REP-' || p.n, p.n, 'Linked', p.opened_at - interval '2 hours', 'Maria Aparecida dos Santos', 'EXTERNAL_OTHER', 'Medium',
                p.opened_at + interval '2 days', 'Rua XV de Novembro', 'Centro', 'Lâmpada apagada', p.id, p.opened_at - interval '2 hours'
           FROM picked p
         RETURNING id, service_order_id, created_at)
       INSERT INTO alert_status_history (alert_id, from_status, to_status, actor, at)
       SELECT a.id, 'Pending', 'Linked', 'bench', a.created_at + (extract(epoch FROM a.created_at)::bigint % 7200) * interval '1 second' FROM a`,
      [tenant.id, partner.id],
    );
    await ctx.pool.query('VACUUM (ANALYZE) service_order, alert, alert_status_history');
    // The seed wrote about a gigabyte of WAL: its checkpoint here, before the first
    // measurement, not inside the export's or the dashboard's runs.
    await ctx.pool.query('CHECKPOINT');
    return { tenantId: tenant.id, orders: count };
  });
}

/** The columns of the order export, plain, as COPY writes them: the anchor's statement. */
function copyOrdersSql(tenantId: string): string {
  return `COPY (SELECT so.number, so.status, so.priority, r.name_pt, t.name, p.code, so.address, so.neighborhood,
                       so.opened_at, so.sla_due_at, so.closed_at,
                       (so.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND so.sla_due_at < now()),
                       (SELECT count(*) FROM alert ca WHERE ca.service_order_id = so.id),
                       (SELECT string_agg(DISTINCT ce.code, ' ' ORDER BY ce.code) FROM alert ca2 JOIN external_system ce ON ce.id = ca2.external_system_id WHERE ca2.service_order_id = so.id)
                  FROM service_order so
                  LEFT JOIN team t ON t.id = so.team_id LEFT JOIN pole p ON p.id = so.pole_id
                  LEFT JOIN reason r ON r.tenant_id = so.tenant_id AND r.code = so.reason_code
                 WHERE so.tenant_id = '${tenantId}'
                 ORDER BY so.opened_at DESC, so.id DESC) TO STDOUT WITH (FORMAT csv)`;
}

/**
 * CSV export of every order of a city (GET /api/admin/tenants/{id}/exports/service-orders,
 * streamed from COPY through Lumen) against `COPY (the same columns) TO STDOUT WITH CSV`
 * through psql, output discarded. Throughput ratio: the anchor's time over Lumen's.
 */
export const reportExportRow: RowDefinition = {
  id: 'report-export',
  title: 'CSV export of a city’s service orders',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await reportCity(ctx);
    const client = new HttpClient(server.baseUrl, { authorization: `Bearer ${await adminToken(ctx)}` });
    const path = `/api/admin/tenants/${city.tenantId}/exports/service-orders`;
    try {
      const first = await client.get(path);
      if (isNotBuilt(first)) throw new Pending('the CSV export (GET /api/admin/tenants/{id}/exports/service-orders) not built yet');
      const rows = first.body.toString('utf8').split('\n').length - 2;
      if (rows !== city.orders) throw new Error(`the export has ${rows} rows for ${city.orders} orders`);
      if (!ctx.tools.psql) throw new Skipped('psql is missing: no COPY anchor');
      const lumen: number[] = [];
      const copy: number[] = [];
      for (let run = 0; run < ctx.opts.runs; run++) {
        lumen.push((await getOk(client, path)).ms);
        copy.push(await psqlWall(ctx.tools.psql, ctx.db.url, copyOrdersSql(city.tenantId)));
      }
      const l = series('ms', lumen, median);
      const a = series('ms', copy, median);
      const throughput = a.median / l.median;
      return {
        lines: [
          {
            label: `every order of a city of ${city.orders.toLocaleString('en-US')}, ${(first.body.length / 1e6).toFixed(0)} MB of CSV`,
            lumen: l,
            detail: `${Math.round(city.orders / (l.median / 1000)).toLocaleString('en-US')} rows/s; COPY ${Math.round(city.orders / (a.median / 1000)).toLocaleString('en-US')} rows/s`,
            anchor: { label: 'COPY of the same columns TO STDOUT WITH CSV, psql, output discarded', series: a },
            ratio: ratioOf(l, a),
            checks: [check('throughput ≥ 0.5× COPY', throughput >= 0.5)],
          },
        ],
        notes: ['Timed on the client to the last byte of the body over loopback; the anchor is psql’s wall time with its output discarded. Lumen writes words for codes and times in the city’s zone, the anchor the raw values.'],
        params: { orders: city.orders, bytes: first.body.length },
      };
    } finally {
      client.close();
    }
  },
};

/**
 * The dashboard of that city (GET /api/admin/tenants/{id}/report, the last 30 days): its
 * figures over all its orders. Target p50 ≤ 1 s.
 */
export const reportDashboardRow: RowDefinition = {
  id: 'report-dashboard',
  title: 'Dashboard figures of a city',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await reportCity(ctx);
    const client = new HttpClient(server.baseUrl, { authorization: `Bearer ${await adminToken(ctx)}` });
    const path = `/api/admin/tenants/${city.tenantId}/report`;
    try {
      const first = await client.get(path);
      if (isNotBuilt(first)) throw new Pending('the dashboard (GET /api/admin/tenants/{id}/report) not built yet');
      const m = await timeGet(ctx, client, path, Math.max(3, Math.round(ctx.sizes.pageRepeats / 3)));
      return {
        lines: [
          {
            label: `backlog, triage, repair and SLA of a city of ${city.orders.toLocaleString('en-US')} orders, last 30 days`,
            lumen: m.series,
            detail: `p99 ${m.p99.toFixed(0)} ms`,
            checks: [check('p50 ≤ 1 s', m.series.median <= 1000)],
          },
        ],
        notes: ['Three statements at once (backlog, triage decisions, completed orders with grouping sets); the period’s indexes are 0080’s.'],
        params: { orders: city.orders },
      };
    } finally {
      client.close();
    }
  },
};
