import { adminToken } from '../harness/admin.js';
import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { check, ratioOf } from '../harness/results.js';
import { inboxCity } from '../harness/seed.js';
import { getOk, timeGet, timeSql } from '../harness/timing.js';
import { Pending, type RowDefinition } from '../harness/context.js';

/** What the inbox sends by default (src/console/web/pages/inbox.tsx): Pending, sort priority, 100 a page. */
const PAGE_SIZE = 100;

/**
 * The statements listAlertDetails runs for an inbox page (page and count), as one
 * statement, over the Pending alerts that also match `extraWhere` (an SQL condition on `a`).
 */
export function inboxPageSql(tenantId: string, extraWhere: string | null = null): string {
  const where = `a.tenant_id = '${tenantId}' AND a.status = 'Pending'${extraWhere ? ` AND (${extraWhere})` : ''}`;
  return `SELECT a.*, es.code AS partner_code, r.name_pt, r.name_en, so.number, so.status AS order_status,
                 (SELECT count(*) FROM alert a WHERE ${where}) AS total
            FROM alert a
            JOIN external_system es ON es.id = a.external_system_id
            LEFT JOIN reason r ON r.tenant_id = a.tenant_id AND r.code = a.reason_code
            LEFT JOIN service_order so ON so.id = a.service_order_id
           WHERE ${where}
           ORDER BY (CASE a.priority WHEN 'Critical' THEN 0 WHEN 'High' THEN 1 WHEN 'Medium' THEN 2 ELSE 3 END), a.sla_due_at, a.alert_number
           LIMIT ${PAGE_SIZE}`;
}

/**
 * The console inbox's first page: GET /api/admin/alerts as the inbox sends it
 * (status Pending, its default sort priority, 100 a page) over a city of Pending
 * alerts. Anchor: the bare SQL of the same page and count through psql.
 */
export const consoleInboxRow: RowDefinition = {
  id: 'console-inbox',
  title: 'Console inbox: first page of Pending alerts',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await inboxCity(ctx);
    const count = city.alerts;
    const client = new HttpClient(server.baseUrl, { authorization: `Bearer ${await adminToken(ctx)}` });
    const path = `/api/admin/alerts?${new URLSearchParams({ tenantId: city.tenantId, status: 'Pending', sort: 'priority', page: '1', pageSize: String(PAGE_SIZE) })}`;
    try {
      const first = await client.get(path);
      if (isNotBuilt(first)) throw new Pending('admin alert list (GET /api/admin/alerts) not built yet');
      const body = json<{ items: unknown[]; total: number }>(await getOk(client, path), 'inbox page');
      if (body.items.length !== Math.min(PAGE_SIZE, count) || body.total !== count) throw new Error(`inbox page: expected ${PAGE_SIZE} items of ${count}, got ${body.items.length} of ${body.total}`);
      const m = await timeGet(ctx, client, path, ctx.sizes.pageRepeats);
      const anchor = await timeSql(ctx, inboxPageSql(city.tenantId), ctx.sizes.pageRepeats);
      const r = ratioOf(m.series, anchor);
      // What the console sends: the same page with groups of Pending alerts (duplicates and
      // supply faults) listed once each.
      const groupedPath = `${path}&grouped=true`;
      await getOk(client, groupedPath);
      const g = await timeGet(ctx, client, groupedPath, ctx.sizes.pageRepeats);
      const rg = ratioOf(g.series, anchor);
      // The same page right after a change in the city (one Pending alert written), so
      // each request computes the groups again instead of using the list the process kept.
      const changed = (await ctx.pool.query<{ id: string }>(`SELECT id FROM alert WHERE tenant_id = $1 AND status = 'Pending' ORDER BY alert_number LIMIT 1`, [city.tenantId])).rows[0]!.id;
      const touch = () => ctx.pool.query(`UPDATE alert SET description = description WHERE id = $1`, [changed]);
      const gc = await timeGet(ctx, client, groupedPath, ctx.sizes.pageRepeats, undefined, touch);
      return {
        lines: [
          {
            label: `page 1 of ${count.toLocaleString('en-US')} Pending alerts, grouped (as the console asks)`,
            lumen: g.series,
            detail: `p99 ${g.p99.toFixed(1)} ms`,
            anchor: { label: 'bare SQL of the ungrouped page and count, psql', series: anchor },
            ratio: rg,
            checks: [check('p50 ≤ 50 ms', g.series.median <= 50)],
          },
          {
            label: `page 1 of ${count.toLocaleString('en-US')} Pending alerts, grouped, each request right after a change in the city (groups computed again)`,
            lumen: gc.series,
            detail: `p99 ${gc.p99.toFixed(1)} ms`,
            anchor: { label: 'bare SQL of the ungrouped page and count, psql', series: anchor },
            ratio: ratioOf(gc.series, anchor),
            checks: [],
          },
          {
            label: `page 1 of ${count.toLocaleString('en-US')} Pending alerts`,
            lumen: m.series,
            detail: `p99 ${m.p99.toFixed(1)} ms`,
            anchor: { label: 'bare SQL of the page and count, psql', series: anchor },
            ratio: r,
            checks: [check('p50 ≤ 50 ms', m.series.median <= 50)],
          },
        ],
        notes: [
          'Timed on the client over one keep-alive connection with a platform admin token. Lumen runs the page and the count as two statements at once; the anchor runs them as one (count as a subquery), rows to /dev/null.',
          'Grouped: each process keeps a city\'s groups while nothing they depend on changed (docs/triage.md); the first grouped line reads an unchanged city, the second writes one of its Pending alerts before each request, outside the time measured.',
          ...(ctx.tools.psql ? [] : ['psql is missing, so the SQL anchor was skipped.']),
        ],
        params: { alerts: count, pageSize: PAGE_SIZE, sort: 'priority', requestsPerRun: ctx.sizes.pageRepeats, runs: ctx.opts.runs },
      };
    } finally {
      client.close();
    }
  },
};
